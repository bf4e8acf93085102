"""What users give the engine: turning text, URLs and images into a Post (`posts`) and finding
instruction-like text in posts and pages (`injection`)."""
