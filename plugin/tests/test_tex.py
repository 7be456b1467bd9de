"""The chapters' inline TeX as MathML and their program lines as code, on the annotated page and
in the report's quotes."""
import pytest

from claimcheck import tex
from claimcheck.chapters import body_html

pytestmark = pytest.mark.fast


@pytest.mark.parametrize("text, formulas", [
    (r"learning rate $3 \times 10^{-3}$:", [r"$3 \times 10^{-3}$"]),
    (r"the state $\mathbf{h}_t$ and $d_k = 32$", [r"$\mathbf{h}_t$", "$d_k = 32$"]),
    ("it costs $5 and $6 today", []),          # money, not math
    ("$$x$$ and $ x $", []),                   # display math and spaced dollars are left alone
    (r"an escaped \$x$ stays", []),
])
def test_an_inline_formula_is_found_as_pandoc_finds_it(text, formulas):
    assert [text[a:b] for a, b, _ in tex.spans(text)] == formulas


def test_a_formula_becomes_mathml_and_the_rest_is_escaped():
    out = tex.to_html(r"rate $3 \times 10^{-3}$ <b>")
    assert out.startswith('rate <span class="tex" title="$3 \\times 10^{-3}$"><math ')
    assert "<mo>×</mo>" in out and out.endswith("</span> &lt;b&gt;")


def test_a_formulas_special_characters_stay_text_and_code_keeps_its_dollars():
    out = tex.to_html(r"$a & b$ and $\text{<b>x</b>}$")
    assert "<mi>&amp;</mi>" in out and "<mtext>&lt;b&gt;x&lt;/b&gt;</mtext>" in out and "<b>" not in out
    assert "<math" not in tex.to_html("`echo $x$` here") and "<math" not in tex.to_html("  cost = $x$ + $y$")
    assert "<math" not in tex.to_html("```\n$x$\n```")


def test_a_formula_latex2mathml_cannot_read_stays_as_written():
    assert tex.to_html(r"$\frac{1}{$ x") == r"$\frac{1}{$ x"


def _claim(quote, status="holds"):
    return {"id": "T-01", "status": status, "quote": quote, "records": [], "expected": "", "measured": None}


def test_the_annotated_page_shows_formulas_as_mathml_and_indented_lines_as_code():
    text = ("Dodici block, learning rate $3 \\times 10^{-3}$:\n\n"
            "  pre-norm,  no warmup          perplexity   37.82\n  post-norm   perplexity  308.05\nFine.\n")
    page = body_html(text, [(text.index("pre-norm"), text.index("37.82") + 5, _claim("pre-norm"), 0)], False)
    assert '<span class="tex" title="$3 \\times 10^{-3}$"><math' in page
    assert page.count('<code class="line">') == 2 and "Fine." in page.split("</code>")[-1]
    assert '<code class="line">  <mark' in page  # the mark opens and closes inside its line


def test_a_mark_across_code_lines_leaves_them_as_plain_text():
    text = "  a = 1\n  b = 2\n"
    page = body_html(text, [(2, text.index("2") + 1, _claim("a = 1\n  b = 2"), 0)], False)
    assert '<code class="line">' not in page and page.count("</mark>") == 1


def test_a_formula_a_quote_cuts_stays_as_written():
    text = r"rate $3 \times 10^{-3}$ here"
    page = body_html(text, [(0, text.index("10"), _claim("rate $3 \\times"), 0)], False)
    assert "<math" not in page and "$3 \\times 10^{-3}$" in page.replace("</mark>", "").split("</a>")[-1]
