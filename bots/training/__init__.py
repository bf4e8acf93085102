"""Training factbot's stance model, outside the engine: pairs from the training sets (`pairs`),
fine-tuning and export (`train`), pair metrics (`metrics`) and the model card (`card`).
Used by `factbot train stance`; the engine only loads the result (`pipeline.verifier.stance`)."""
