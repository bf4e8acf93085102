"""Sentence embeddings: the embedder interface and models (`embedder`), the int8 ONNX model
(`onnx`, the default) and the backend choice (`backends`)."""
