"""Finding the references a statement line names (docs/rules.md "Matching", step 1).

"A line whose reference or narration contains a subject's reference" is answered without
scanning every subject per line: the line's texts are cut into candidate tokens, and each is
looked up in a dict (or, in the shell, an index) of references.

A token is any stretch of one whitespace-free run of the text that starts at the start of a
run of letters and digits and ends at the end of one, 4 to 100 characters long:
`"TRF/PSP-0042/fee"` gives `TRF/PSP`, `TRF/PSP-0042`, `TRF/PSP-0042/FEE`, `PSP-0042`,
`PSP-0042/FEE`, `0042` and `0042/FEE`. So a reference is found wherever it stands between
separators, and never inside a longer word or number (`PSP-004` is not found in
`PSP-0042`). When several references are found, the matcher takes the longest (`ORD-1` and
`ORD-1-RETRY` both stand in `ORD-1-RETRY`: it is the latter's line). Tokens and references
are compared upper-cased (banks often upper-case narrations): `reference_key` is the one
normalisation both sides use, so the shell's index is on the upper-cased references.
"""

from __future__ import annotations

import re

# Shorter references would be found in too many narrations ("Transfer 1 of 3").
MIN_REFERENCE_LENGTH = 4
MAX_REFERENCE_LENGTH = 100  # the ledger's limit
# Bounds the work per line: a reference spans at most this many letter-and-digit runs, and
# only this much of a text is read (a narration longer than that is not a bank's).
MAX_PARTS = 16
MAX_TEXT = 1000

_PART = re.compile(r"[^\W_]+")  # letters and digits, any script


def reference_key(reference: str) -> str:
    """The form a reference is looked up by: upper-cased, without the separators around
    it (a reference with whitespace inside can never be found in a line)."""
    if reference[:1].isalnum() and reference[-1:].isalnum():
        return reference.upper()  # nothing around it to take off (most references)
    return re.sub(r"^[\W_]+|[\W_]+$", "", reference).upper()


def reference_tokens(*texts: str) -> set[str]:
    """Every token of `texts` of a reference's length, upper-cased (see the module's
    docstring)."""
    tokens: set[str] = set()
    for text in texts:
        for run in text[:MAX_TEXT].split():
            if run.isalnum():
                # One run of letters and digits (most words): itself, if of a reference's
                # length (isalnum is exactly the characters `_PART` matches).
                if MIN_REFERENCE_LENGTH <= len(run) <= MAX_REFERENCE_LENGTH:
                    tokens.add(run.upper())
                continue
            parts = [m.span() for m in _PART.finditer(run)]
            for i, (start, _) in enumerate(parts):
                for _, end in parts[i : i + MAX_PARTS]:
                    if end - start > MAX_REFERENCE_LENGTH:
                        break
                    if end - start >= MIN_REFERENCE_LENGTH:
                        tokens.add(run[start:end].upper())
    return tokens
