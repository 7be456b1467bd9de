"""One test per claim of text.md. No test carries a tier marker but SORT-02's simulation: each
runs in its claim's registry tier (claims.toml)."""
import math
import random

import pytest

from claimcheck import diverges


def insertion_comparisons(items: list) -> int:
    a, count = list(items), 0
    for i in range(1, len(a)):
        j = i
        while j > 0:
            count += 1
            if a[j - 1] <= a[j]:
                break
            a[j - 1], a[j] = a[j], a[j - 1]
            j -= 1
    return count


def merge_sort(items: list) -> tuple[list, int]:
    """Top-down merge sort: (sorted items, comparisons)."""
    if len(items) <= 1:
        return list(items), 0
    mid = len(items) // 2
    (left, a), (right, b) = merge_sort(items[:mid]), merge_sort(items[mid:])
    out, i, j, count = [], 0, 0, a + b
    while i < len(left) and j < len(right):
        count += 1
        if left[i] <= right[j]:
            out.append(left[i])
            i += 1
        else:
            out.append(right[j])
            j += 1
    return out + left[i:] + right[j:], count


def binary_search_comparisons(sorted_items: list, x) -> int:
    """Three-way comparisons (equal, less, greater) until x is found or ruled out."""
    lo, hi, count = 0, len(sorted_items) - 1, 0
    while lo <= hi:
        mid = (lo + hi) // 2
        count += 1
        if sorted_items[mid] == x:
            return count
        lo, hi = (mid + 1, hi) if sorted_items[mid] < x else (lo, mid - 1)
    return count


def inversions(p: list) -> int:
    return sum(p[i] > p[j] for i in range(len(p)) for j in range(i + 1, len(p)))


@pytest.mark.claim("SORT-01")
def test_insertion_sort_makes_at_most_45_comparisons_on_ten_items(claim_record):
    worst = claim_record("SORT-01", insertion_comparisons(list(range(10, 0, -1))), tolerance="exact")
    assert worst == math.comb(10, 2) == 45


@pytest.mark.claim("SORT-02")
def test_mean_inversions_by_formula(claim_record):
    mean = claim_record("SORT-02", 1000 * 999 / 4, tolerance="exact", label="n(n-1)/4")
    assert mean == 249_750


@pytest.mark.slow  # overrides the registry's tier: the same claim, by simulation
@pytest.mark.claim("SORT-02")
def test_mean_inversions_by_simulation(claim_record):
    rng = random.Random(2)
    counts = [inversions(rng.sample(range(300), 300)) for _ in range(200)]
    mean = sum(counts) / len(counts)
    se = (sum((c - mean) ** 2 for c in counts) / (len(counts) - 1) / len(counts)) ** 0.5
    claim_record("SORT-02", round(mean * 1000 * 999 / (300 * 299)), label="200 random permutations of 300, scaled",
                 tolerance="equivalence: the formula within 4 standard errors")
    assert abs(mean - 300 * 299 / 4) <= 4 * se  # n = 300 keeps it to seconds; the formula scales as n(n-1)


@pytest.mark.claim("SORT-03")
def test_merge_sort_needs_at_most_25_comparisons_on_ten_items(claim_record):
    bound = 10 * 4 - 2 ** 4 + 1
    rng = random.Random(3)
    worst = max(merge_sort(rng.sample(range(10), 10))[1] for _ in range(20_000))
    claim_record("SORT-03", worst, tolerance="exact", label="most comparisons over 20,000 random orders")
    assert worst <= bound == 25


@pytest.mark.claim("SORT-04")
def test_merge_sort_makes_about_8700_comparisons_on_1000_random_items(claim_record):
    rng = random.Random(4)
    mean = sum(merge_sort(rng.sample(range(1000), 1000))[1] for _ in range(200)) / 200
    claim_record("SORT-04", round(mean), tolerance="equivalence: ±1 %, 'about' a number given to two figures")
    assert abs(mean - 8700) <= 87


@pytest.mark.claim("SORT-05")
@diverges("binary search over 1,000 items needs up to 10 comparisons: ⌊log2 1000⌋ + 1 = 10, not 9")
def test_binary_search_needs_at_most_9_comparisons_among_1000(claim_record):
    items = list(range(1000))
    worst = claim_record("SORT-05", max(binary_search_comparisons(items, x) for x in items), tolerance="exact")
    assert worst <= 9
