"""The image stage: read the pictures of a post (MUSE's describer, RAV's image features).

intake (fetch and decode safely) -> OCR, perceptual hashes, metadata (EXIF, C2PA), caption,
faces (named only from the operator's gallery of public figures) -> one description per
image (`pipeline.image.describe`), which the claims stage reads.
`pipeline.image.stage.read_images` is the stage's one entry point; every part runs off the
event loop.
"""
