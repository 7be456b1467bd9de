"""claimcheck.corrections: what an erratum's sentence should read, made from the records, in the
text's language, and the patch that puts it in."""
import subprocess

import pytest

from claimcheck.corrections import CorrectionError, fill, number, patch, propose

pytestmark = pytest.mark.fast


@pytest.mark.parametrize("x, spec, language, text", [
    (1.0451, ".2f", "it", "1,05"), (1.0451, ".2f", "en", "1.05"), (5147.0, ",.0f", "it", "5.147"),
    (5147.0, ",.0f", "en", "5,147"), (5147.0, ",.0f", "pl", "5\u00a0147"), (0.279, ".1%", "it", "27,9\u00a0%"),
    (0.279, ".1%", "en", "27.9%"), (248.7, "", "it", "248,7"), (37.8212, ".2f", "xx", "37.82"),
])
def test_a_number_is_written_in_the_texts_style(x, spec, language, text):
    assert number(x, spec, language) == text


def test_one_seed_has_no_interval_to_write():
    with pytest.raises(CorrectionError, match="one seed: no interval"):
        fill("{mean} [{lo}; {hi}]", [248.2, float("-inf"), float("inf")], "it")


def test_a_template_reads_an_interval_a_dict_of_them_and_code_style():
    assert fill("circa {mean:.1f} punti [{lo:.2f}; {hi:.2f}]", [1.0451, 0.2448, 1.8455], "it") \
        == "circa 1,0 punti [0,24; 1,85]"
    four = {"pre": [51.79, 48.93, 54.66], "post": [302.62, 286.19, 319.04], "flag": True}
    assert fill("perplexity   {pre.mean!c:.2f}, post {post.hi:.0f}", four, "it") == "perplexity   51.79, post 319"
    with pytest.raises(CorrectionError, match=r"names \{pre\}, and its subject records only \{pre.mean\}"):
        fill("{pre}", four, "it")
    with pytest.raises(CorrectionError, match="the conversions are !c"):
        fill("{pre.mean!r}", four, "it")


def test_words_that_carry_the_sign_write_its_size_and_refuse_the_other_sign():
    """"inferiore del 18 %", not "-18,3 %"; a minus sign, never a hyphen, where prose has one."""
    gap = [-0.183, -0.21, -0.156]
    assert fill("inferiore del {mean!n:.0%}", gap, "it") == "inferiore del 18\u00a0%"
    assert fill("{mean:+.1%}", gap, "it") == "\u221218,3\u00a0%"
    assert fill("{mean!c:+.3f}", gap, "it") == "-0.183"  # code keeps what a program prints
    with pytest.raises(CorrectionError, match=r"say the number is positive, and it measures -0.183"):
        fill("superiore del {mean!p:.0%}", gap, "it")


def _claim(kind, **kw):
    diagnosis = {"kind": kind, "reason": "1 of 2 points not measured yet: lr", "points": ["lr=0.1"],
                 "grid": [{"point": "stated", "holds": False},
                          {"point": "lr=0.1", "holds": None, "model_steps": 9000}]} if kind else None
    return {"id": "T-01", "status": "diverges", "quote": "la run senza è leggermente avanti",
            "records": [{"label": "gap: mean and 90 % interval", "measured": [1.0451, 0.2448, 1.8455],
                         "tolerance": "comparison", "scale": "full", "subject": True}], "scale": "full",
            "correction": "la run senza è indietro di {mean:.1f} punti [{lo:.2f}; {hi:.2f}]",
            "setting_words": {"lr=0.1": "con learning rate 0,1"}, "diagnosis": diagnosis, **kw}


def test_each_kind_of_erratum_gets_its_proposal():
    text = propose(_claim("text"), "it")
    assert text["proposed"] == "la run senza è indietro di 1,0 punti [0,24; 1,85]" and text["missing"] is None
    unstated = propose(_claim("unstated"), "it")
    assert unstated["proposed"] == "la run senza è leggermente avanti (con learning rate 0,1)"
    pending = propose(_claim("pending"), "it")
    assert pending["proposed"] is None and pending["draft"] == text["proposed"]
    assert pending["missing"] == ("1 of 2 points not measured yet: lr; recording what is missing costs about "
                                  "9,000 model-steps of training")
    none = propose(_claim(None), "it")
    assert none["proposed"] is None and none["missing"].startswith("not classified: nothing has checked")
    assert propose(dict(_claim("text"), status="holds"), "it") is None  # only an erratum


def test_the_cost_counts_what_is_missing_and_asks_a_second_look_only_where_one_is_due():
    from claimcheck.corrections import _cost
    grid = [{"point": "stated", "holds": False, "value": [1, 0, 2]},
            {"point": "a", "holds": None, "value": None, "model_steps": 3000},         # not recorded
            {"point": "b", "holds": None, "value": [1, 0, 2], "model_steps": 2000},    # seeds missing
            {"point": "c", "holds": None, "value": None}]                              # no cost declared
    assert _cost({"grid": grid}) == ("recording what is missing costs about 5,000 model-steps of training; "
                                     "a point not recorded declares no cost")
    grid += [{"point": "d", "holds": None, "value": [1, 0, 2], "state": "undecided"}]
    assert _cost({"grid": grid}).endswith("needs a second look on fresh seeds, declared before it runs: as many "
                                          "model-steps again as its first")


def test_what_stops_a_proposal_is_said_not_hidden():
    assert propose(_claim("text", correction=None), "it")["missing"] == \
        "the registry gives this claim no correction template (`correction = ...`)"
    # no record marked subject=True: the claim's own number (an unlabelled record), never whichever
    # was judged last
    unmarked = [{k: v for k, v in r.items() if k != "subject"} for r in _claim("text")["records"]]
    assert propose(_claim("text", records=unmarked), "it")["missing"].startswith(
        "no record is marked as the one the sentence is about")
    own = _claim("text", records=unmarked + [
        {"label": None, "measured": 10, "tolerance": "exact", "scale": "full"}], correction="at most {value:.0f}")
    assert propose(own, "it")["proposed"] == "at most 10"
    with pytest.raises(CorrectionError, match="does not format a number"):
        fill("{value:d}", 1.5, "it")
    with pytest.raises(CorrectionError, match="malformed"):
        fill("a { b", 1.5, "it")
    assert number(1.234e-05, "", "it") == "0,00001234" and number(123456.0, "", "en") == "123,456"
    assert propose(_claim("unstated", setting_words={}), "it")["missing"] == \
        "the registry gives no words for the setting lr=0.1 (`setting_words`)"
    one_seed = _claim("text", records=[{"label": "gap: mean and 90 % interval over 1 seeds", "scale": "full",
                                         "measured": [1.0, float("-inf"), float("inf")], "tolerance": "x",
                                         "subject": True}])
    assert propose(one_seed, "it")["missing"] == "one seed: no interval to write"


def test_setting_words_go_before_the_sentences_full_stop():
    c = _claim("unstated", quote="la run senza è leggermente avanti.")
    assert propose(c, "it")["proposed"] == "la run senza è leggermente avanti (con learning rate 0,1)."


def test_a_patch_keeps_crlf_line_ends_and_splits_lines_only_at_newlines(tmp_path):
    text = "Titolo\r\n\r\nla run senza è leggermente avanti.\r\nfine\x0cpagina\r\n"
    c = _claim("text")
    diff = patch("it.txt", text, [dict(c, correction_proposal=propose(c, "it"))])
    assert "-la run senza è leggermente avanti.\r\n+la run senza è indietro di 1,0 punti [0,24; 1,85].\r\n" in diff
    (tmp_path / "it.txt").write_bytes(text.encode())
    (tmp_path / "p.patch").write_bytes(diff.encode())
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    done = subprocess.run(["git", "apply", "--check", "p.patch"], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    with pytest.raises(CorrectionError, match="outside the run's root"):
        patch("../it.txt", text, [dict(c, correction_proposal=propose(c, "it"))])


def test_a_patch_rewrites_each_passage_and_applies_to_a_clean_checkout(tmp_path):
    text = "Titolo\n\n  pre   perplexity   37.82\n  post  perplexity  308.05\n\nla run senza è leggermente avanti.\n"
    rows = ["pre   perplexity   37.82", "post  perplexity  308.05"]
    table = _claim("text", quote=" […] ".join(rows), replaces=rows,
                   records=[{"label": "four arms", "scale": "full", "tolerance": "joint", "subject": True,
                             "measured": {"pre": [51.79, 48.9, 54.7], "post": [302.62, 286.2, 319.0]}}],
                   correction=["pre   perplexity   {pre.mean!c:.2f}", "post  perplexity  {post.mean!c:.2f}"])
    claims = [dict(c, correction_proposal=propose(c, "it")) for c in (table, dict(_claim("text"), id="T-02"))]
    diff = patch("ch/it.txt", text, claims)
    assert "-  pre   perplexity   37.82\n-  post  perplexity  308.05\n" \
           "+  pre   perplexity   51.79\n+  post  perplexity  302.62\n" in diff
    assert "+la run senza è indietro di 1,0 punti [0,24; 1,85].\n" in diff
    (tmp_path / "ch").mkdir()
    (tmp_path / "ch" / "it.txt").write_text(text, encoding="utf-8")
    (tmp_path / "p.patch").write_text(diff, encoding="utf-8")
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    done = subprocess.run(["git", "apply", "--check", "p.patch"], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert patch("ch/it.txt", text, [dict(_claim("pending"), correction_proposal=propose(_claim("pending"), "it"))]) == ""
    lost = dict(_claim("text"), replaces="not in the text")
    with pytest.raises(CorrectionError, match="T-01: the passage it corrects is not in ch/it.txt"):
        patch("ch/it.txt", text, [dict(lost, correction_proposal=propose(lost, "it"))])


def test_a_patch_on_a_hard_wrapped_page_rewraps_only_the_lines_it_touches(tmp_path):
    """A passage that runs over a wrapped paragraph's line break: the patch changes those lines
    and no other, keeps the paragraph's width and its list indent, and applies."""
    text = ("# Page\n\n"
            "- The first item stays exactly as it was written,\n"
            "  and so does its second line, which no erratum\n"
            "  touches. Then la run senza è\n"
            "  leggermente avanti, says the text, and more words\n"
            "  follow to the end of the item.\n"
            "- Another item.\n")
    c = _claim("text")
    diff = patch("page.md", text, [dict(c, correction_proposal=propose(c, "it"))])
    removed = [x[1:] for x in diff.splitlines() if x.startswith("-") and not x.startswith("---")]
    added = [x[1:] for x in diff.splitlines() if x.startswith("+") and not x.startswith("+++")]
    assert removed == ["  touches. Then la run senza è", "  leggermente avanti, says the text, and more words"]
    width = max(len(x) for x in text.splitlines())
    assert all(len(x) <= width and x.startswith("  ") for x in added), added
    assert " ".join(" ".join(added).split()) == ("touches. Then la run senza è indietro di 1,0 punti [0,24; 1,85], "
                                                 "says the text, and more words")
    (tmp_path / "page.md").write_text(text, encoding="utf-8")
    (tmp_path / "p.patch").write_text(diff, encoding="utf-8")
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    done = subprocess.run(["git", "apply", "p.patch"], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    after = (tmp_path / "page.md").read_text(encoding="utf-8").splitlines()
    assert after[:4] == text.splitlines()[:4] and after[-2:] == text.splitlines()[-2:]


def test_a_template_reads_a_per_seed_list_and_a_start_count():
    assert fill("in media il {mean:.1%}, da {min:.0%} a {max:.0%} su {n:.0f}", [0.9, 1.0, 0.95, 1.0], "it") == \
        "in media il 96,2\u00a0%, da 90\u00a0% a 100\u00a0% su 4"
    assert fill("{median:.2f}", [3.0, 1.0, 2.0, 10.0], "en") == "2.50"
    count = "25 of 77 starts, rate 0.32 [0.21, 0.45] against most starts (rate > 1/2)"
    assert fill("na {K:.0f} z {N:.0f} startów, ok. {rate:.0%} [{lo:.2f}; {hi:.2f}]", count, "pl") == \
        "na 25 z 77 startów, ok. 32% [0,21; 0,45]"  # pl: no space before %
    assert fill("{K:.0f}/{N:.0f}", "0 of 5", "en") == "0/5"
    with pytest.raises(CorrectionError, match="a start count"):
        fill("{K}", "no count here", "en")


def test_an_open_kind_shows_each_reading_that_could_still_explain_it():
    d = {"kind": "pending", "reason": "1 of 3 points not measured yet: lr", "points": [],
         "grid": [{"point": "stated", "holds": False},
                  {"point": "lr=0.1", "holds": None, "model_steps": 9000},
                  {"point": "wd=0", "holds": False, "seeds": [0, 1]},
                  {"point": "batch=8", "holds": None, "state": "undecided", "seeds": [0, 1]},
                  {"point": "warmup=0", "holds": True, "seeds": [0, 1]}]}
    p = propose(_claim("pending", diagnosis=d), "it")
    assert [(r["point"], r["state"]) for r in p["readings"]] == [
        ("lr=0.1", "not measured on its declared looks yet"),
        ("batch=8", "measured, and undecided at the grid's level"),
        ("warmup=0", "holds on one look; a second look on fresh seeds decides")]
    assert p["readings"][0]["draft"] == "la run senza è leggermente avanti (con learning rate 0,1)"
    assert p["readings"][1]["draft"] is None  # no words for it in the registry: named, not drafted
    assert p["draft"] == "la run senza è indietro di 1,0 punti [0,24; 1,85]"


def test_a_rewrap_on_a_crlf_page_keeps_every_line_end(tmp_path):
    text = "- la run senza è\r\n  leggermente avanti, dice il testo, e poi altre parole ancora\r\n  fino alla fine.\r\nfine\r\n"
    c = _claim("text")
    diff = patch("p.md", text, [dict(c, correction_proposal=propose(c, "it"))])
    (tmp_path / "p.md").write_bytes(text.encode())
    (tmp_path / "p.patch").write_bytes(diff.encode())
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    done = subprocess.run(["git", "apply", "p.patch"], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    after = (tmp_path / "p.md").read_bytes().decode()
    assert after.count("\n") == after.count("\r\n") and after.endswith("fine\r\n")
    assert "indietro di 1,0 punti" in after


def test_a_per_seed_list_of_three_is_never_read_as_an_interval():
    seeds = [0.5, 0.4, 0.6]  # in interval order by chance
    assert fill("{mean:.2f}", seeds, "en") == "0.50"  # read as [mean, lo, hi]
    assert fill("{median:.2f} {n:.0f}", seeds, "en", per_seed=True) == "0.50 3"
