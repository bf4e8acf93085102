"""Language-model infrastructure: one client owns every call (`pipeline.llm.client`), endpoints,
output parsing, prompts, usage accounting and the local model server. Stages live elsewhere."""
