"""Does a user's reply explicitly confirm the action the agent just proposed?

Procedure scoring needs to know whether a write was consented to. Asking a model
would make scores slow, costly and unrepeatable, so this is a small set of rules:
deterministic, pure Python, a few microseconds per reply. It leans towards
"not yes": a missed yes costs a false consent violation, a false yes would hide a
real one.

The rules, in order (the first that applies decides):

1. Explicit negation, refusal or deferral anywhere -> "no": "no", "nope", "not",
   "don't", "never", "wait", "hold on", "stop", "later", "one second",
   "forget it", "changed my mind", 👎. Idioms that only look negative are
   neutralised first: "no problem", "no worries", "why not", "not a problem",
   "no objections" count as agreement; "no longer", "don't need it anymore",
   "can't wait", "make sure" count as nothing.
2. Hedging, conditions or a change before proceeding anywhere -> "unclear":
   "maybe", "I guess", "not sure", "let me check", "hmm", "if", "only if",
   "as long as", "unless", "but", "however", "instead", "except", "before",
   "first" (not "the first one"), "after you", and "actually" once the reply
   has already affirmed ("yes, actually can you..."). A request to change a
   value or to change something else too is also "unclear" ("yes, change it
   to size M", "yes, and can you also update my address?"); this can miss a
   yes that merely restates the proposed new value, which is the safe side.
3. Otherwise the reply is "yes" when some clause affirms ("yes", "yep", "ok",
   "sure", "go ahead", "proceed", "confirm", "that's correct", "do it",
   "sounds good", "please cancel it", 👍 ...) and that clause is not itself a
   question ("yes?", "go ahead?", "are you sure?" do not count; "can you go
   ahead and cancel it?" is a polite request and does). A question before
   the affirmation makes the reply "unclear" (the user is waiting for an
   answer). A question after it is a separate topic and leaves the yes
   standing ("yes. also, what's my balance?"), unless it asks about price or
   cost ("yes, what's the total?"), since then the user's decision may hang
   on the answer.
4. Anything else -> "unclear".
"""

from __future__ import annotations

import re
from typing import Literal

__all__ = ["Affirmation", "classify_reply"]

Affirmation = Literal["yes", "no", "unclear"]

_EMOJI_YES = re.compile("[\U0001f44d\U0001f44c\u2705\u2714\u2611]")  # 👍 👌 ✅ ✔ ☑
_EMOJI_NO = re.compile("[\U0001f44e\u274c\u2716\U0001f6ab]")  # 👎 ❌ ✖ 🚫
_APOSTROPHES = re.compile("[\u2018\u2019\u02bc`´]")

# Step 0: idioms rewritten before any rule looks at the text (longest first).
_AGREEING_IDIOMS = re.compile(
    r"\b(?:(?:i )?(?:don'?t|do not) see why not|no reason not to"
    r"|(?:that'?s|that is|it'?s|it is) not a problem|not a problem"
    r"|(?:won'?t|wouldn'?t|shouldn'?t|isn'?t) be a problem"
    r"|no problems?|no prob|no worries|no worry|no objections?|no complaints|why not"
    r"|(?:i )?(?:don'?t|do not) mind)\b"
)
_NEUTRAL_IDIOMS = re.compile(
    r"\b(?:no longer|can'?t wait|make sure|not only|don'?t worry|don'?t care"
    r"|doesn'?t matter|let me know if"
    r"|(?:don'?t|do not) (?:need|want|use) (?:it|them|this|that|these|those|the \w+)"
    r" any ?more)\b"
)
_HEDGING_IDIOMS = re.compile(
    r"\b(?:not (?:quite |really |totally |entirely |100% )?(?:sure|certain)"
    r"|(?:don'?t|do not) know|no idea|can'?t decide|can'?t make up my mind)\b"
)

# Step 1: negation, refusal, deferral.
_NEGATIVE = re.compile(
    r"\b(?:no+|nope|nah|naw|nay|negative|not|never|nevermind"
    r"|don'?t|doesn'?t|didn'?t|won'?t|can'?t|cannot|isn'?t|aren'?t|wasn'?t|weren'?t"
    r"|shouldn'?t|wouldn'?t|couldn'?t|haven'?t|hasn'?t"
    r"|wait|stop|later|hold (?:on|off|up|it)|hang on"
    r"|(?:one|a|just a) (?:sec|second|moment|minute|min)"
    r"(?! (?:item|one|order|pair|product|address|card))"
    r"|forget (?:it|that|about it)|chang(?:ed|e|ing) my mind|scratch that"
    r"|decline|refuse|reject)\b"
)

# Step 2: hedges, conditions, changes before proceeding.
_HEDGE = re.compile(
    r"\b(?:maybe|perhaps|probably|possibly|might|unsure|i (?:guess|suppose|think|believe)"
    r"|guess so|kind of|kinda|sort of|sorta|h+m+|u+m+|u+h+|erm|idk|dunno"
    r"|let me (?:think|check|see|look|ask|talk|double|confirm|get back|consult)"
    r"|(?:need|have|want) to (?:think|check|ask|talk|look|confirm|consult)"
    r"|think about it|get back to you|depends)\b"
)
_CONDITION = re.compile(
    r"\b(?:only if|as long as|provided|providing|unless|assuming|on condition"
    r"|after (?:i|you|we)|once (?:i|you|we|it|that|the)|when i"
    r"|if(?! you (?:can|could|would|please)))\b"
)
_CHANGE_FIRST = re.compile(
    r"\b(?:but|however|though|although|except|instead|rather|before"
    r"|(?<!checking )(?<!asking )(?<!checking with me )(?<!asking me )(?<!with me )"
    r"first(?! (?:one|option|item|choice)))\b"
)
_CHANGE_REQUEST = re.compile(
    r"\b(?:change|switch|swap|modify|update|make) (?:it |them |that |this |the \w+ )?(?:to|into)\b"
    r"|\bmake it (?!so\b|happen\b)"
    r"|\b(?:change|switch|swap|modify|update)\b.*\b(?:as well|also|too)\b"
    r"|\b(?:also|too)\b.*\b(?:change|switch|swap|modify|update)\b"
)
_ACTUALLY = re.compile(r"\bactually\b")

# Step 3: affirmation, question shape, questions about cost.
_AFFIRM = re.compile(
    r"\b(?:y|ye+s+|yse|yeas|ys|yeah*|yea|yah|ya|yep+|yup+|yas|yeh"
    r"|ok+|okay|okey|okie|oki|oky|k+|alright|all right|aight"
    r"|sure|shure|sure thing|fine|go\s*ahe?a?d|go for it|pro(?:ceed|cede|ced)"
    r"|confirm(?:ed|s)?|i agree|agreed|approved?|affirmative|absolutely|definitely"
    r"|of course|certainly|indeed|exactly|perfect|great|excellent|awesome|cool"
    r"|correct(?! (?:the|my|it|this|that)\b)"
    r"|(?:that'?s|that is|thats|you'?re|you are|yes|yep|yeah|all|is) right"
    r"|(?:sounds|looks|all|that'?s|thats|that is|it'?s) good|good to go"
    r"|that works|works for me|you got it|good with (?:that|it|this)|make it so"
    r"|do (?:it|that|so)|please do|let'?s do|lets do|that'?s what i want"
    r"|please (?:cancel|return|exchange|process|submit|complete|finalize|place|book|refund)"
    r"|(?:cancel|return|exchange|process|submit|complete|finalize|place|book|refund)"
    r" (?:it|them) please)\b"
)
_BARE_AFFIRM = re.compile(
    r"^(?:please|right|good"
    r"|(?:cancel|return|exchange|process|submit|complete|finalize|place|book|refund)"
    r" (?:it|them|that|this|both|all|the|my)\b.*)$"
)
_POLITE_REQUEST = re.compile(
    r"^(?:can|could|would|will) you (?:please |just )?"
    r"(?:go\s*ahead|proceed|do (?:it|that|so)"
    r"|cancel|return|exchange|process|submit|complete|finalize|place|book|refund)\b"
)
_INTERROGATIVE = re.compile(
    r"^(?:what|what'?s|how|how'?s|why|when|where|which|who|whose|is|are|am|was|were"
    r"|can|could|would|will|should|shall|may|do (?:you|i|we)|does|did|have you|has)\b"
)
_COST = re.compile(r"\b(?:how much|price|prices|cost|costs|charge|charged|fee|fees|total|amount)\b")
_UNIT = re.compile(r"([^.!?;,:\n\u2026\u2014\u2013]+)([.!?;,:\n\u2026\u2014\u2013]*)")
_SPACES = re.compile(r"\s+")


def _normalize(text: str) -> str:
    text = _APOSTROPHES.sub("'", text.lower())
    text = _EMOJI_YES.sub(" yes ", text)
    text = _EMOJI_NO.sub(" no ", text)
    text = text.replace(" - ", " \u2014 ")
    text = _AGREEING_IDIOMS.sub(" sure ", text)
    text = _NEUTRAL_IDIOMS.sub(" ", text)
    text = _HEDGING_IDIOMS.sub(" maybe ", text)
    return _SPACES.sub(" ", text).strip()


def classify_reply(text: str) -> Affirmation:
    """Classify a user's reply as an explicit "yes", a "no", or "unclear".

    The rules and their order are described in the module docstring.
    """
    norm = _normalize(text)
    if not norm:
        return "unclear"
    if _NEGATIVE.search(norm):
        return "no"
    if (
        _HEDGE.search(norm)
        or _CONDITION.search(norm)
        or _CHANGE_FIRST.search(norm)
        or _CHANGE_REQUEST.search(norm)
    ):
        return "unclear"
    first_affirm = _AFFIRM.search(norm)
    actually = _ACTUALLY.search(norm)
    if first_affirm and actually and actually.start() > first_affirm.start():
        return "unclear"

    seen_question = False
    affirmed = False
    for match in _UNIT.finditer(norm):
        unit = match.group(1).strip()
        if not unit:
            continue
        polite = bool(_POLITE_REQUEST.match(unit))
        question = not polite and ("?" in match.group(2) or bool(_INTERROGATIVE.match(unit)))
        if not affirmed:
            if question:
                seen_question = True
            elif polite or _AFFIRM.search(unit) or _BARE_AFFIRM.match(unit):
                if seen_question:
                    return "unclear"
                affirmed = True
        elif question and _COST.search(unit):
            return "unclear"
    return "yes" if affirmed else "unclear"
