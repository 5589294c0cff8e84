"""Training: data files, tokenization with loss masks, and the TRL trainers."""
