"""The Polish lab's alphabet: 32 letters, space and full stop. 34 symbols, lowercase."""
POLISH_LETTERS = "aąbcćdeęfghijklłmnńoóprsśtuwyzźż"
ALPHABET = POLISH_LETTERS + " ."
