"""Answers going out: reply jobs, review-card jobs, the send-once ledger and acknowledgements."""
