"""factbot's own verifier: a trained (claim, passage) stance model and the verdict it supports.

- `pairs`: the public pair data sets, their label maps and claim-disjoint splits;
- `stance`: the shipped ONNX cross-encoder (supports / refutes / not enough info), calibrated;
- `verdict`: a claim's label from the stances of its credible evidence;
- `train`: fine-tuning, resumable checkpoints, calibration and ONNX export (torch, training only).
"""
