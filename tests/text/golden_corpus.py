"""The texts of the tokenizer golden files (make_tokenizer_golden.py): about 20,000 strings in many categories,
and a separate slice of the same categories to train tokenizers on, all drawn from one random.Random.

Every character comes from a code point that Unicode 8.0 had already assigned (the ranges below are of old
blocks, and a draw that lands on a code point unassigned even today is skipped): `tokenizers` and utf8proc 2.8
agree on those."""

import dataclasses
import unicodedata

WORDS = """the of and to in is was for that on as with by he it at from his an were are which this be or had not
but also have one their first new two after its who they has more other been time all she into only over city up
year when many most later may some between there would world during three under where such university can season
school state about national united film used then than team known name these before through well both being while
him second part early four including people however life did century music series until government since album
history area war population her made several each against game district based played born work american town
public station river house years final club north tokenization embeddings transformer sentence similarity semantic
retrieval cosine normalization GPU CUDA O'Neill co-operate e-mail re-enter state-of-the-art""".split()

GERMAN = """der die das und ist nicht ein eine zu mit auf für von sich dem den des im Straße Größe Mädchen Übung
über schön Bäcker Grüße fährt Käse hören Äpfel Öl müssen Fußgängerübergänge Donaudampfschifffahrtsgesellschaft
Rindfleischetikettierungsüberwachungsaufgabenübertragungsgesetz heute morgen Zeitung Wörterbuch""".split()

FRENCH = """le la les un une des et est dans pour que qui pas sur avec être avoir été à où çà déjà élève
hôpital forêt naïve Noël garçon français cœur sœur œuvre château crème brûlée façade fiancée théâtre l'homme
aujourd'hui qu'il c'est j'ai n'est d'accord""".split()

ACCENTED = """café naïve résumé jalapeño piñata Ångström coöperate São Kraków Dvořák Łódź Zürich Reykjavík
Île-de-France Pokémon España Ærøskøbing smörgåsbord Māori Việt Nguyễn İstanbul ılık ǅemal Œuvre ﬁnance ﬂow
Ｆｕｌｌｗｉｄｔｈ Ⓐⓑⓒ ⅫⅣ Å ½ ² ℌ ㎏ ㍻ ﷺ ǆ ß ẞ""".split()

CONTRACTIONS = ["'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", "'T", "'RE", "'Ve", "'LL", "'D", "’s", "'x"]
CONTRACTED = """don't can't won't it's I'm you're we've they'd she'll he'd that's ISN'T WE'RE You'Ve""".split()

# Emoji of Unicode 8.0 or older: single ones, skin tones, flags, keycaps and ZWJ sequences.
EMOJI = ["😀", "😂", "😍", "🙂", "🙃", "🤔", "🤖", "🦄", "🦀", "🐍", "👍", "🙏", "🔥", "✨", "🎉", "🌈", "💻", "🚀",
         "☕", "❤", "❤\ufe0f", "👍🏻", "👍🏼", "👍🏽", "🙏🏾", "🙏🏿", "👋🏽", "🇺🇸", "🇯🇵", "🇩🇪", "🇫🇷", "🇧🇷", "🇺🇦",
         "1\ufe0f\u20e3", "#\ufe0f\u20e3", "*\u20e3", "©\ufe0f", "®", "™", "🏳\ufe0f\u200d🌈",
         "👨\u200d👩\u200d👧\u200d👦", "👩\u200d💻", "👩🏽\u200d💻", "👁\ufe0f\u200d🗨\ufe0f",
         "🕵\ufe0f\u200d♀\ufe0f", "👩\u200d❤\ufe0f\u200d💋\u200d👨", "❤\ufe0f\u200d🔥", "🇺", "🏽", "\u200d"]

PUNCTUATION = (list("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~") +
               list("…—–“”‘’«»¿¡§¶•·‰′″‹›〈〉【】「」『』、。・！？，：；（）¨´¸˜"))

SPECIALS = ["[CLS]", "[SEP]", "[MASK]", "[PAD]", "[UNK]", "[cls]", "[MAS", "MASK]", "[[MASK]]", "[SEP][SEP]",
            "<s>", "</s>", "<pad>", "<unk>", "<mask>", "<s", "s>", "<s><s>", "< s>", "<|endoftext|>",
            "<|im_start|>", "<|im_end|>", "<|im_start|>user", "<|endoftext", "<tool_call>", "</tool_call>"]

CONTROLS = ["\t", "\r", "\n", "\r\n", "\x0b", "\x0c", "\x1b", "\x7f", "\x85", "\u200b", "\u200c", "\u200d",
            "\u2028", "\u2029", "\ufeff", "\ufffd", "\u00ad", "\u00a0", "\u3000", "\u2003", "\u2009", "\ue000",
            "\U000f0000", "\u202e", "\u2066", "\u0378"] + [chr(c) for c in range(0x20)]

WHITESPACE = [" ", " ", " ", "\t", "\n", "\r", "\r\n", "\u00a0", "\u3000", "\u2003", "\u2028", "\x0b", "\x0c"]

# (first, last) code point ranges of each script's letters, marks, digits and punctuation, in blocks Unicode 8.0
# had filled.
SCRIPTS = {
    "chinese": [(0x4E00, 0x9FCC), (0x4E00, 0x62FF), (0x3400, 0x4DB5), (0xF900, 0xFA6D), (0x20000, 0x2A6D6),
                (0x3001, 0x3002), (0xFF01, 0xFF5E)],
    "japanese": [(0x3041, 0x3096), (0x30A1, 0x30FA), (0x30FC, 0x30FC), (0x3001, 0x3002), (0x4E00, 0x5FFF),
                 (0xFF66, 0xFF9F)],
    "korean": [(0xAC00, 0xD7A3), (0xAC00, 0xB2FF), (0x1100, 0x1112), (0x1161, 0x1175), (0x3131, 0x318E)],
    "thai": [(0x0E01, 0x0E3A), (0x0E40, 0x0E5B)],
    "arabic": [(0x0621, 0x064A), (0x064B, 0x0652), (0x0660, 0x0669), (0x060C, 0x060C), (0x061F, 0x061F),
               (0xFE70, 0xFEFC)],
    "hebrew": [(0x05D0, 0x05EA), (0x05B0, 0x05BC), (0x05BE, 0x05BE), (0xFB1D, 0xFB4F)],
    "devanagari": [(0x0905, 0x0939), (0x093C, 0x094D), (0x0958, 0x096F)],
    "cyrillic": [(0x0410, 0x044F), (0x0401, 0x0401), (0x0451, 0x0451), (0x0456, 0x0457), (0x0490, 0x0491)],
    "greek": [(0x0386, 0x03CE), (0x1F00, 0x1FBC)],
    "combining": [(0x0300, 0x036F), (0x1DC0, 0x1DF5), (0x20D0, 0x20F0), (0xFE20, 0xFE2D)],
    "symbols": [(0x2190, 0x21FF), (0x2200, 0x22FF), (0x2500, 0x257F), (0x25A0, 0x25FF), (0x2600, 0x26FF),
                (0x20A0, 0x20BD), (0x2100, 0x214F), (0x2150, 0x2188), (0x2460, 0x24FF), (0x3200, 0x32FE)],
}


def pick(rng, script):
    while True:
        first, last = rng.choice(SCRIPTS[script])
        c = chr(rng.randint(first, last))
        if unicodedata.category(c) != "Cn":  # never assigned: gaps in the Greek and Hebrew blocks
            return c


def script_word(rng, script, length):
    return "".join(pick(rng, script) for _ in range(length))


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


def english(rng):
    return sentence(rng, WORDS + CONTRACTED, rng.randint(1, 40)) + rng.choice([".", "!", "?", "", " ", "\n"])


def german(rng):
    return sentence(rng, GERMAN + WORDS[:40], rng.randint(1, 30)) + rng.choice([".", "!", "?", ""])


def french(rng):
    return sentence(rng, FRENCH + WORDS[:40], rng.randint(1, 30)) + rng.choice([".", " !", " ?", ""])


def accented(rng):
    text = sentence(rng, ACCENTED + WORDS, rng.randint(1, 20))
    if rng.random() < 0.6:  # letters carrying stacks of combining marks, composed and not
        letters = [c + "".join(pick(rng, "combining") for _ in range(rng.randint(1, 4))) for c in "aeiouAEIOUnc"]
        text += rng.choice([" ", ""]) + "".join(rng.choice(letters) for _ in range(rng.randint(1, 8)))
    return text


def script_text(script):
    def make(rng):
        spaced = script not in ("chinese", "japanese", "thai") or rng.random() < 0.3
        parts = []
        for _ in range(rng.randint(1, 14)):
            parts.append(script_word(rng, script, rng.randint(1, 12)))
            roll = rng.random()
            if roll < 0.15:
                parts.append(rng.choice(WORDS))
            elif roll < 0.25:
                parts.append(str(rng.randint(0, 9999)))
            elif roll < 0.3:
                parts.append(rng.choice(PUNCTUATION))
        return (" " if spaced else "").join(parts)
    return make


def emoji(rng):
    parts = [rng.choice(EMOJI + EMOJI + WORDS) for _ in range(rng.randint(1, 12))]
    return rng.choice([" ", "", " ", "!"]).join(parts)


def combining(rng):
    base = rng.choice(["", "a", "e", "n", "o", " ", "x", "\u3042", "\u0915", "\u05d0", "1", "."])
    marks = "".join(pick(rng, "combining") for _ in range(rng.randint(1, 20)))
    return rng.choice([base + marks, marks, f"{rng.choice(WORDS)} {base}{marks} {rng.choice(WORDS)}"])


def control(rng):
    words = [rng.choice(WORDS + ACCENTED) for _ in range(rng.randint(1, 12))]
    return "".join(w + rng.choice(CONTROLS + [" ", ""]) for w in words)


def whitespace(rng):
    if rng.random() < 0.3:
        return " " * rng.randint(1, 40)
    run = lambda: "".join(rng.choice(WHITESPACE) for _ in range(rng.randint(1, 12)))
    if rng.random() < 0.5:
        return run()
    return run() + rng.choice(WORDS) + run() + rng.choice(WORDS) + run()


def numbers(rng):
    kind = rng.randrange(6)
    if kind == 0:
        return str(rng.randint(0, 10 ** rng.randint(1, 30)))
    if kind == 1:
        return f"{rng.uniform(-1e6, 1e6):.{rng.randint(0, 6)}f} {rng.randint(0, 10**9):,} {rng.randint(0, 99)}%"
    if kind == 2:
        return f"{rng.randint(1900, 2099)}-{rng.randint(1, 12):02}-{rng.randint(1, 28):02} {rng.randint(0, 23)}:{rng.randint(0, 59):02}"
    if kind == 3:  # digits of other scripts, full width, superscripts
        digits = "0123456789٠١٢٣٤٥٦٧٨٩०१२३४५६७८९０１２３４５６７８９²³¹½⅓①②③"
        return "".join(rng.choice(digits) for _ in range(rng.randint(1, 20)))
    if kind == 4:
        return f"+1 ({rng.randint(200, 999)}) {rng.randint(100, 999)}-{rng.randint(1000, 9999)} v{rng.randint(0, 9)}.{rng.randint(0, 99)}.{rng.randint(0, 9)}"
    return " ".join(str(rng.randint(0, 999)) + rng.choice(WORDS) for _ in range(rng.randint(1, 8)))


def punctuation(rng):
    run = "".join(rng.choice(PUNCTUATION) for _ in range(rng.randint(1, 30)))
    symbols = script_word(rng, "symbols", rng.randint(1, 10))
    return rng.choice([run, symbols, f"{rng.choice(WORDS)}{run}{rng.choice(WORDS)}", f"{run} {sentence(rng, WORDS, 3)}",
                       f"{symbols} {rng.choice(WORDS)}{run}"])


CODE = ["def f(x):\n    return x[{n}] * {{'a': {n}}}\n", "for (int i = 0; i < {n}; ++i) {{ sum += a[i]; }}",
        "if x != None and y >= {n}: print(f\"{{x!r}}\")", "<div class=\"c{n}\"><a href='/p?q={n}'>link</a></div>",
        "SELECT * FROM t WHERE id = {n} AND name LIKE '%ab%';", "const f = (a, b) => a ?? b || {n};",
        "#include <vector>\nint main() {{ return {n}; }}\n", "\tfoo_bar_{n} = self.__init__(**kwargs)\r\n",
        "    x = [i**2 for i in range({n})]  # squares", "$ git commit -m \"fix #{n}\" && echo $?",
        "{{\"key\": [{n}, null, true, \"v\\u00e9\"]}}", "fn main() {{ let v: Vec<u8> = vec![{n}; 4]; }}"]


def code(rng):
    return "".join(rng.choice(CODE).format(n=rng.randint(0, 999)) for _ in range(rng.randint(1, 4)))


def url(rng):
    word = lambda: rng.choice(WORDS).lower()
    return rng.choice([
        f"https://www.{word()}.com/{word()}/{word()}?id={rng.randint(0, 99999)}&q={word()}+{word()}#{word()}",
        f"http://example.org:{rng.randint(80, 9000)}/path/to/file_{rng.randint(0, 99)}.html",
        f"{word()}.{word()}@mail{rng.randint(1, 9)}.org #{word()} @user_{rng.randint(0, 999)}",
        f"see https://de.wikipedia.org/wiki/Stra%C3%9Fe or ftp://files.{word()}.net/a.tar.gz",
        f"www.{word()}.io/{word()}-{word()}/"])


def contractions(rng):
    parts = []
    for _ in range(rng.randint(1, 12)):
        parts.append(rng.choice(WORDS) + rng.choice(CONTRACTIONS) if rng.random() < 0.6 else rng.choice(CONTRACTED))
    return rng.choice([" ", "", "  "]).join(parts)


def specials(rng):
    parts = [rng.choice(SPECIALS + SPECIALS + WORDS) for _ in range(rng.randint(1, 8))]
    return rng.choice([" ", "", "\n"]).join(parts)


def long_word(rng):
    length = rng.choice([99, 100, 101, rng.randint(102, 800)])
    kind = rng.randrange(6)
    if kind == 0:
        return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(length))
    if kind == 1:
        return rng.choice(["é", "a", "ab", "\u0e01", "\u4e00", "😀"]) * length
    if kind == 2:
        return "e\u0301" * (length // 2)
    if kind == 3:
        return script_word(rng, rng.choice(["chinese", "thai", "korean", "arabic"]), length)
    if kind == 4:
        return rng.choice(["x", "word"]) + " " + "ab" * (length // 2) + " end"
    return "".join(rng.choice(WORDS) for _ in range(length // 6))


def long_text(rng):
    kind = rng.randrange(4)
    if kind == 0:
        return sentence(rng, WORDS + ACCENTED + GERMAN, rng.randint(200, 600))
    if kind == 1:
        return " ".join(rng.choice(MAKERS_FOR_LONG)(rng) for _ in range(rng.randint(10, 40)))
    if kind == 2:
        return script_word(rng, rng.choice(["chinese", "japanese", "thai"]), rng.randint(300, 3000))
    return "\n".join(code(rng) for _ in range(rng.randint(10, 40)))


def mixed(rng):
    return rng.choice(["", " ", "\n"]).join(rng.choice(MAKERS_FOR_MIXED)(rng) for _ in range(rng.randint(2, 5)))


HARD = ["", " ", "  ", "   ", " " * 17, "\t", "\n", "\r", "\r\n", "\n\n\n", " \n ", "\x00", "\x00\x01\x1f", "\u200b",
        "\ufeff", "\ufeffhello", "a", "A", "ab", "İ", "Σσς ΣΑΣ", "ﬁ", "①", "…", "Ｈｅｌｌｏ", "\u3000\u00a0", "é",
        "e\u0301", "\u0301", "\u0301\u0301a", "'s", "'S", "it's", "don't", "I'M HERE", "'", "''", "'re'", "  leading",
        "trailing  ", "a  b", "a   b    c", " a", "a ", "\u2581", "\u2581a", "▁▁", "[CLS]", "[SEP]", "[MASK] a",
        "<s>", "</s>", "<s></s>", "<mask>", "<unk>", "<pad>", "<|endoftext|>", "<|im_start|>x<|im_end|>", "<tool_call>",
        "<0x41>", "Ġ", "ĠĠ", "##", "##a", "👨\u200d👩\u200d👧\u200d👦", "🇺🇸🇯🇵", "👍🏽", "1\ufe0f\u20e3", "你好世界",
        "こんにちは", "안녕하세요", "สวัสดีครับ", "مرحبا بالعالم", "שלום עולם", "नमस्ते दुनिया", "Привет мир",
        "Γειά σου Κόσμε", "123", "1 2 3", "3.14159", "1,000,000", "٣٤٥", "x" * 100, "x" * 101, "é" * 300,
        "\u4e00" * 200, " " * 300, "a\tb\nc\rd", "\x7f", "\x85", "\u2028\u2029", "\ud7a3", "\U00020000",
        "ǅ", "ß", "ẞ", "ﷺ", "㍻", "½"]


@dataclasses.dataclass
class Corpus:
    golden_texts: list
    golden_categories: list
    training_texts: list


PLAN = [("english", english, 2000), ("german", german, 800), ("french", french, 800), ("accented", accented, 900),
        ("chinese", script_text("chinese"), 900), ("japanese", script_text("japanese"), 800),
        ("korean", script_text("korean"), 800), ("thai", script_text("thai"), 700),
        ("arabic", script_text("arabic"), 700), ("hebrew", script_text("hebrew"), 600),
        ("devanagari", script_text("devanagari"), 600), ("cyrillic", script_text("cyrillic"), 600),
        ("greek", script_text("greek"), 600), ("emoji", emoji, 900), ("combining", combining, 600),
        ("control", control, 900), ("whitespace", whitespace, 500), ("numbers", numbers, 700),
        ("punctuation", punctuation, 800), ("code", code, 700), ("url", url, 500),
        ("contractions", contractions, 600), ("specials", specials, 500), ("long_word", long_word, 300),
        ("long_text", long_text, 100), ("mixed", mixed, 2100)]
TRAINING_SHARE = 0.4  # beside each category's golden texts, this many more again to train on

MAKERS_FOR_LONG = [english, german, french, accented, emoji, numbers, punctuation, url, contractions] + \
    [script_text(s) for s in ("chinese", "japanese", "korean", "thai", "arabic", "cyrillic")]
MAKERS_FOR_MIXED = MAKERS_FOR_LONG + [control, whitespace, code, specials, combining, script_text("hebrew"),
                                      script_text("devanagari"), script_text("greek")]


def build(rng):
    texts, categories, training = list(HARD), ["hard"] * len(HARD), []
    for category, make, count in PLAN:
        texts += [make(rng) for _ in range(count)]
        categories += [category] * count
        training += [make(rng) for _ in range(int(count * TRAINING_SHARE))]
    return Corpus(texts, categories, training)
