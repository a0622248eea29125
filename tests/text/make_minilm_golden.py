#!/usr/bin/env python3
"""Writes tests/text/data/minilm_wordpiece_256.jsonl: a varied corpus of texts and the ids HuggingFace
`tokenizers` gives each with all-MiniLM-L6-v2's tokenizer.json, truncated at 256 and never padded (what
sentence-transformers does with max_seq_length 256), for minilm_tokenizer_test to agree with.

    python3 -m venv /tmp/venv && /tmp/venv/bin/pip install tokenizers==0.23.3
    /tmp/venv/bin/python tests/text/make_minilm_golden.py [model_dir]

The first line records how the file was made; then one line per text: {"text", "ids", and "truncated": true
when the text had more tokens than fit}. The corpus is drawn from a fixed seed, so running the script again
with the same `tokenizers` writes the same file.

Scripts are drawn from code points that Unicode 8.0 had already assigned their category: for about 600
newer ones `tokenizers`' tables and utf8proc's differ (Note [Unicode versions] in src/text/tokenizer/normalizer.cpp).
"""

import json
import pathlib
import random
import sys

import tokenizers

TOKENIZERS_VERSION = "0.23.3"
SEED = 20240611
MAX_LENGTH = 256

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUTPUT = ROOT / "tests/text/data/minilm_wordpiece_256.jsonl"

WORDS = """the of and to in is was for that on as with by he it at from his an were are which this be or had
not but also have one their first new two after its who they has more other been time all she into only
over city up year when many most later may some between there would world during three under where such
university can season school state about national united film used then than team known name these before
through well both being while him second part early four first including people however life did century
music series until government since album history area war population de her made several each against game
district based played born work american town each public station river house years final club three north
antidisestablishmentarianism electroencephalography supercalifragilisticexpialidocious photosynthesis
tokenization embeddings transformer sentence similarity semantic retrieval cosine normalization GPU CUDA
don't can't won't it's I'm you're we've they'd O'Neill co-operate e-mail re-enter state-of-the-art""".split()

ACCENTED = """café naïve résumé jalapeño piñata Ångström façade coöperate über straße Øresund crème brûlée
déjà vu São Paulo Kraków Dvořák Łódź Zürich Reykjavík Île-de-France fiancée Pokémon Beyoncé España
Ærøskøbing smörgåsbord Māori Việt Nam Nguyễn İstanbul ılık ǅemal Œuvre ﬁnance Ｆｕｌｌｗｉｄｔｈ Ⓐⓑⓒ ⅫⅣ Å""".split()

EMOJI = ["😀", "😂", "🥰", "👍", "👍🏽", "🙏🏿", "❤️", "🔥", "✨", "🎉", "🇺🇸", "🇯🇵", "🏳️‍🌈", "👨‍👩‍👧‍👦",
         "👩🏻‍💻", "🧑‍🚀", "1️⃣", "#️⃣", "©️", "™", "☕", "🫠", "🦀", "🐍", "\u2764\ufe0f\u200d\U0001F525"]

PUNCTUATION = list("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~") + list("…—–“”‘’«»¿¡§¶•·‰′″‹›〈〉【】「」『』、。・！？，：；（）")

CONTROLS = ["\t", "\r", "\n", "\r\n", "\x00", "\x07", "\x0b", "\x0c", "\x1b", "\x7f", "\x85", "\u200b", "\u200c",
            "\u200d", "\u2028", "\u2029", "\ufeff", "\ufffd", "\u00ad", "\u00a0", "\u3000", "\u2003", "\ue000",
            "\U000f0000", "\u202e", "\u2066", "\u0378"]

SPECIALS = ["[CLS]", "[SEP]", "[MASK]", "[PAD]", "[UNK]", "[cls]", "[Sep]", "[MAS", "MASK]", "[[MASK]]", "[SEP][SEP]"]

# (first, last) code point ranges of each script's letters and marks, all assigned by Unicode 8.0.
SCRIPTS = {
    "arabic": [(0x0621, 0x064A), (0x064B, 0x0652), (0x0660, 0x0669), (0x060C, 0x060C), (0x061F, 0x061F)],
    "hebrew": [(0x05D0, 0x05EA), (0x05B0, 0x05BC), (0x05BE, 0x05BE)],
    "cyrillic": [(0x0410, 0x044F), (0x0401, 0x0401), (0x0451, 0x0451), (0x0456, 0x0457), (0x0490, 0x0491)],
    "greek": [(0x0386, 0x03CE), (0x1F00, 0x1FBC)],
    "thai": [(0x0E01, 0x0E3A), (0x0E40, 0x0E5B)],
    "devanagari": [(0x0905, 0x0939), (0x093C, 0x094D), (0x0964, 0x096F)],
    "cjk": [(0x4E00, 0x9FCC), (0x3400, 0x4DB5), (0xF900, 0xFA6D), (0x20000, 0x2A6D6)],
    "kana": [(0x3041, 0x3096), (0x30A1, 0x30FA), (0x30FC, 0x30FC), (0x3001, 0x3002)],
    "hangul": [(0xAC00, 0xD7A3), (0x1100, 0x1112), (0x3131, 0x318E)],
    "combining": [(0x0300, 0x036F), (0x1DC0, 0x1DF5), (0x20D0, 0x20F0), (0xFE20, 0xFE2D)],
}


def pick_script(rng, script):
    first, last = rng.choice(SCRIPTS[script])
    return chr(rng.randint(first, last))


def script_word(rng, script, length):
    return "".join(pick_script(rng, script) for _ in range(length))


def sentence(rng, words, count):
    out = []
    for _ in range(count):
        word = rng.choice(words)
        roll = rng.random()
        if roll < 0.1:
            word = word.capitalize()
        elif roll < 0.13:
            word = word.upper()
        out.append(word)
        if rng.random() < 0.1:
            out.append(rng.choice(",.;:!?"))
    return " ".join(out)


def ascii_text(rng):
    kind = rng.randrange(6)
    if kind == 0:
        return sentence(rng, WORDS, rng.randint(1, 30)) + rng.choice([".", "!", "?", ""])
    if kind == 1:
        return f"https://example.com/{rng.choice(WORDS)}?id={rng.randint(0, 99999)}&q={rng.choice(WORDS)}"
    if kind == 2:
        return f"{rng.choice(WORDS)}.{rng.choice(WORDS)}@mail{rng.randint(1, 9)}.org #{rng.choice(WORDS)} @user_{rng.randint(0, 999)}"
    if kind == 3:
        return f"{rng.uniform(-1e6, 1e6):.{rng.randint(0, 6)}f} {rng.randint(0, 10**9):,} x^2 + y_1 = {rng.randint(0, 99)}% (approx.)"
    if kind == 4:
        return f"def f(x): return x[{rng.randint(0, 9)}] * {{'a': {rng.randint(0, 9)}}} // <tag attr=\"v\"/> && a||b;"
    return "".join(chr(rng.randint(0x20, 0x7E)) for _ in range(rng.randint(1, 80)))


def accented_text(rng):
    words = ACCENTED + WORDS
    text = sentence(rng, words, rng.randint(1, 20))
    if rng.random() < 0.5:  # letters followed by stacks of combining marks
        letters = [c + "".join(pick_script(rng, "combining") for _ in range(rng.randint(1, 4))) for c in "aeiouAEIOU"]
        text += " " + "".join(rng.choice(letters) for _ in range(rng.randint(1, 8)))
    return text


def scripts_text(rng):
    scripts = list(SCRIPTS)
    parts = []
    for _ in range(rng.randint(1, 12)):
        script = rng.choice(scripts)
        parts.append(script_word(rng, script, rng.randint(1, 12)))
        if rng.random() < 0.3:
            parts.append(rng.choice(WORDS))
    return rng.choice([" ", "", ", "]).join(parts)


def emoji_text(rng):
    parts = [rng.choice(EMOJI + WORDS) for _ in range(rng.randint(1, 10))]
    return rng.choice([" ", ""]).join(parts)


def punctuation_text(rng):
    run = "".join(rng.choice(PUNCTUATION) for _ in range(rng.randint(1, 30)))
    return rng.choice([run, f"{rng.choice(WORDS)}{run}{rng.choice(WORDS)}", f"{run} {sentence(rng, WORDS, 3)}"])


def control_text(rng):
    words = [rng.choice(WORDS + ACCENTED) for _ in range(rng.randint(1, 10))]
    return "".join(w + rng.choice(CONTROLS + [" "]) for w in words)


def special_text(rng):
    parts = [rng.choice(SPECIALS + WORDS) for _ in range(rng.randint(1, 8))]
    return rng.choice([" ", ""]).join(parts)


def long_word(rng):
    length = rng.choice([99, 100, 101, rng.randint(102, 400)])
    kind = rng.randrange(4)
    if kind == 0:
        return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(length))
    if kind == 1:  # two bytes a character: max_input_chars_per_word counts characters
        return "é" * length
    if kind == 2:  # accents are stripped before the word's characters are counted
        return "e\u0301" * (length // 2)
    return rng.choice(["x", "word"]) + " " + "ab" * (length // 2) + " end"


def long_text(rng):
    kind = rng.randrange(4)
    if kind == 0:
        return sentence(rng, WORDS + ACCENTED, rng.randint(250, 420))
    if kind == 1:  # right at the limit: n one-token words
        return " ".join(["a"] * rng.randint(250, 260))
    if kind == 2:  # the cut falls inside a word of many pieces
        return " ".join(["a"] * rng.randint(248, 254)) + " antidisestablishmentarianism electroencephalography"
    return "".join(pick_script(rng, "cjk") for _ in range(rng.randint(250, 400)))


def mixed_text(rng):
    makers = [ascii_text, accented_text, scripts_text, emoji_text, punctuation_text, control_text, special_text]
    return rng.choice(["", " ", "\n"]).join(rng.choice(makers)(rng) for _ in range(rng.randint(2, 4)))


def corpus(rng):
    texts = ["", " ", "   ", "\t\n\r ", "\u3000\u00a0", "\x00", "\u200b", "a", "[CLS]", "İ", "Σσς ΣΑΣ"]
    plan = [(ascii_text, 2500), (accented_text, 1500), (scripts_text, 2000), (emoji_text, 700),
            (punctuation_text, 700), (control_text, 1000), (special_text, 400), (long_word, 300),
            (long_text, 120), (mixed_text, 1200)]
    for maker, count in plan:
        texts.extend(maker(rng) for _ in range(count))
    whitespace = " \t\n\r\u3000\u00a0\u2028"
    texts.extend("".join(rng.choice(whitespace) for _ in range(rng.randint(1, 12))) for _ in range(100))
    return texts


def main():
    if tokenizers.__version__ != TOKENIZERS_VERSION:
        sys.exit(f"tokenizers {tokenizers.__version__} is installed; the golden file pins {TOKENIZERS_VERSION}")
    model_dir = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / ".deps/models/all-MiniLM-L6-v2"
    tokenizer = tokenizers.Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    # tokenizer.json itself asks for padding and truncation at 128; sentence-transformers overrides both.
    tokenizer.no_padding()
    tokenizer.enable_truncation(MAX_LENGTH)
    texts = corpus(random.Random(SEED))
    encodings = tokenizer.encode_batch(texts)
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    with OUTPUT.open("w", encoding="utf-8", newline="\n") as out:
        header = {"generator": "tests/text/make_minilm_golden.py", "tokenizers": tokenizers.__version__,
                  "model": model_dir.name, "seed": SEED, "max_length": MAX_LENGTH, "texts": len(texts)}
        out.write(json.dumps(header) + "\n")
        for text, encoding in zip(texts, encodings):
            line = {"text": text, "ids": encoding.ids}
            if encoding.overflowing:
                line["truncated"] = True
            out.write(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n")
    print(f"{OUTPUT}: {len(texts)} texts, {OUTPUT.stat().st_size} bytes, tokenizers {tokenizers.__version__}")


if __name__ == "__main__":
    main()
