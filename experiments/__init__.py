"""The experiments around the network: corpora and tokenizer, the training loop and its run
cache, and each chapter's own experiment (the Winograd task, the Polish lab, the cost of
attention). This layer imports ``model``; ``model`` never imports it.
"""
