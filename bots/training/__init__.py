"""Training factbot's stance model, outside the engine: pairs from the training sets (`pairs`),
fine-tuning, calibration and export (`trainer`), a trainable model recovered from an int8
export (`recover`), pair metrics (`scores`) and the model card (`card`).
Used by `factbot train stance`; the engine only loads the result (`pipeline.verifier.stance`)."""
