"""Platform requests: the adapter contract, the intake with its guards, privacy and wording."""
