"""Judging claims: fact-check review matching, narratives, the model judge, the tiered rule, quote
extraction.
"""
