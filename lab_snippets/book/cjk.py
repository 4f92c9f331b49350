"""The one rule of Chinese emphasis that both the catalogue checks (``i18n``) and the zh style
tools (``zhstyle``) apply: Chinese has no italics, so an English italic may be bold or plain."""

from __future__ import annotations

import collections
import re


def allow_chinese_emphasis(english: collections.Counter, chinese: collections.Counter):
    """English's rendered spans as the Chinese may show them, and how many italics became bold.

    Chinese has no italics: each English ``em`` may be a ``strong`` or nothing in the translation
    (every other span, and every bold of the English, must stay)."""
    dropped = english["em_open"] - chinese["em_open"]
    bolded = chinese["strong_open"] - english["strong_open"]
    if dropped > 0 and 0 <= bolded <= dropped:
        allowed = collections.Counter(english)
        allowed["em_open"], allowed["strong_open"] = chinese["em_open"], chinese["strong_open"]
        return +allowed, bolded
    return english, 0


_CODE = re.compile(r"(`+)(.+?)\1", re.S)
ROLE_TITLE = re.compile(r"(\{[a-z:]+\})(`+)([^`]+?)\s*<([^<>`]+)>\2")
_ROLE_BARE = re.compile(r"(\{[a-z:]+\})(`+)([^<>`]+?)\2")


def code_spans(text: str) -> collections.Counter:
    """The code spans and roles a translation must keep. A cross-reference with its own title
    (``{doc}`Chapter 06 <../notebooks/06_semaphore>` ``) keeps its role and target; its title is
    prose and is translated."""
    text = ROLE_TITLE.sub(lambda m: f"{m.group(1)}{m.group(2)}<{m.group(4)}>{m.group(2)}", text)
    text = _ROLE_BARE.sub(lambda m: f"{m.group(1)}{m.group(2)}<{m.group(3)}>{m.group(2)}", text)  # = titled
    return collections.Counter(m.group(0) for m in _CODE.finditer(text))


def is_chinese(language: str | None) -> bool:
    """Whether a Sphinx ``language`` setting names the Chinese edition."""
    return str(language or "").lower().replace("-", "_").startswith("zh")
