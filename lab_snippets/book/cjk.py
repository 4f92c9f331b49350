"""The one rule of Chinese emphasis that both the catalogue checks (``i18n``) and the zh style
tools (``zhstyle``) apply: Chinese has no italics, so an English italic may be bold or plain."""

from __future__ import annotations

import collections


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
