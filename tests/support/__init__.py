"""Test support shared by every test package: a clock moved by hand, local servers."""
