"""A document's inline TeX ($...$) as MathML, and its code lines as code: the quotes in the report
and the annotated pages read as the author wrote them. latex2mathml converts, with no network;
what it cannot read stays as written."""
import html
import re
import xml.etree.ElementTree as ET

from latex2mathml.converter import convert_to_element
from markupsafe import escape

# $...$ as pandoc reads it: no space just inside either dollar, no digit right after the closing
# one ("$5 and $6" is money), never $$
MATH = re.compile(r"(?<![\\$])\$(?=\S)([^$\n]*?[^\s\\])\$(?![\d$])")


def mathml(tex: str) -> str | None:
    """The MathML of one inline formula, or None where latex2mathml cannot read it."""
    try:
        root = convert_to_element(tex)
    except Exception:  # noqa: BLE001 - a formula it cannot parse is shown as written
        return None
    for node in root.iter():  # latex2mathml keeps entities as text: unescape, and let ElementTree escape once
        node.text = html.unescape(node.text) if node.text else node.text
        node.tail = html.unescape(node.tail) if node.tail else node.tail
    return ET.tostring(root, encoding="unicode")


INDENTED = r"^(?: {2,}|\t)\S"  # a program's line or its output in a plain text: indented
# what is code, where a dollar is a dollar: a Markdown fence or code span, a plain text's indented line
CODE = re.compile(rf"(?ms)^(```|~~~).*?^\1[^\n]*$|`[^`\n]*`|{INDENTED}[^\n]*$")


def in_code(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in CODE.finditer(text)]


def formulas(text: str):
    """Each ``$...$`` match of ``text`` outside code."""
    code = in_code(text)
    return [m for m in MATH.finditer(text) if not any(a <= m.start() < b for a, b in code)]


def spans(text: str, skip=lambda a, b: False) -> list[tuple[int, int, str]]:
    """(start, end, MathML) of each inline formula of ``text`` that converts; ``skip(a, b)``
    leaves one out (a formula a quote's edge cuts)."""
    out = []
    for m in formulas(text):
        ml = mathml(m.group(1))
        if ml is not None and not skip(m.start(), m.end()):
            out.append((m.start(), m.end(), f'<span class="tex" title="{html.escape(m.group(0))}">{ml}</span>'))
    return out


def to_html(text: str) -> str:
    """``text`` escaped for HTML, its formulas as MathML."""
    out, pos = [], 0
    for a, b, ml in spans(text):
        out += [str(escape(text[pos:a])), ml]  # escaped as the report's templates escape
        pos = b
    out.append(str(escape(text[pos:])))
    return "".join(out)


CODE_LINE = re.compile(INDENTED)


def is_code_line(line: str) -> bool:
    return bool(CODE_LINE.match(line))
