"""IT 3.1 Setup and corpus: the arithmetic of the ladder's setup (the corpus itself: slow tier)."""
import pytest

from model import shakespeare_config
from model.data import split
from model.train import SHAKESPEARE_FULL

pytestmark = pytest.mark.fast

CHARS, TOKENS = 1_115_394, 459_760  # the document's figures


@pytest.mark.claim("CORP-01")
def test_chars_per_token_rounds_to_2_43(claim_record):
    ratio = claim_record("CORP-01", CHARS / TOKENS, expected=2.43, tolerance="rounds to 2 dp",
                         label="chars/token from the document's counts")
    assert round(ratio, 2) == 2.43


@pytest.mark.claim("CORP-02")
def test_ninety_ten_split_is_contiguous_and_sized(claim_record):
    train, val = split(range(TOKENS))
    claim_record("CORP-02", [len(train), len(val)], expected=[413_784, 45_976], tolerance="exact")
    assert (len(train), len(val)) == (413_784, 45_976)
    assert train[-1] + 1 == val[0]  # contiguous: the held-out text follows the training text


@pytest.mark.claim("CORP-03")
def test_ladder_budget_is_the_documents(claim_record):
    c, b = shakespeare_config(), SHAKESPEARE_FULL
    assert (c.d_model, c.block_size, c.vocab_size) == (128, 128, 1024)
    assert (b.steps, b.lr, b.batch_size) == (3000, 1e-3, 64)
    predictions = claim_record("CORP-03", b.predictions(c.block_size), expected=24_576_000,
                               tolerance="exact", label="predicted tokens")
    assert predictions == 3000 * 64 * 128 == 24_576_000
    epochs = claim_record("CORP-03", predictions / 413_784, expected=59.4, tolerance="±0.05",
                          label="epochs of the 90 % split")
    assert epochs == pytest.approx(59.4, abs=0.05)  # far from one pass: overfitting is possible
