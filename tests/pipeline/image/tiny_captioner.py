"""A tiny random vision-encoder-decoder captioning model, built and saved by the tests."""

from __future__ import annotations

from pathlib import Path

WORDS = ["<pad>", "<s>", "</s>", "<unk>", "a", "flooded", "street", "photo", "of", "the", "city"]


def build_tiny_captioner(directory: Path) -> Path:
    """Save a ViT + GPT-2 captioner with random weights and a word-level tokenizer there."""
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import (
        GPT2Config,
        GPT2LMHeadModel,
        PreTrainedTokenizerFast,
        VisionEncoderDecoderModel,
        ViTConfig,
        ViTImageProcessor,
        ViTModel,
    )

    torch.manual_seed(0)
    vocab = {word: n for n, word in enumerate(WORDS)}
    core = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=core,
        bos_token="<s>",
        eos_token="</s>",
        pad_token="<pad>",
        unk_token="<unk>",
    )
    encoder = ViTModel(
        ViTConfig(
            image_size=32,
            patch_size=16,
            hidden_size=32,
            num_hidden_layers=1,
            num_attention_heads=2,
            intermediate_size=37,
        )
    )
    decoder = GPT2LMHeadModel(
        GPT2Config(
            vocab_size=len(WORDS),
            n_positions=64,
            n_embd=32,
            n_layer=1,
            n_head=2,
            add_cross_attention=True,
            bos_token_id=1,
            eos_token_id=2,
            pad_token_id=0,
        )
    )
    model = VisionEncoderDecoderModel(encoder=encoder, decoder=decoder)
    model.config.decoder_start_token_id = 1
    model.config.pad_token_id = 0
    model.config.eos_token_id = 2
    model.generation_config.decoder_start_token_id = 1
    model.generation_config.pad_token_id = 0
    model.generation_config.eos_token_id = 2
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    ViTImageProcessor(size={"height": 32, "width": 32}).save_pretrained(directory)
    return directory
