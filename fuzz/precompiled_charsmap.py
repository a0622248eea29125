"""A SentencePiece precompiled charsmap read and written in Python, for make_text_corpus.py's Precompiled seeds: the
lookup spm_precompiled does, and a small charsmap of chosen rules laid out as darts-clone lays out a double array.
Only the standard library is used."""
import struct


def charsmap_lookup(charsmap, key):
    """The replacement the charsmap's trie gives the shortest prefix of `key` it holds (as spm_precompiled)."""
    (trie_bytes,) = struct.unpack_from("<I", charsmap)
    units = struct.unpack_from("<%dI" % (trie_bytes // 4), charsmap, 4)
    strings = charsmap[4 + trie_bytes:]
    node = units[0] >> 10 << ((units[0] & (1 << 9)) >> 6)
    for byte in key:
        node ^= byte
        unit = units[node]
        if unit & (0x80000000 | 0xFF) != byte:
            return None
        node ^= unit >> 10 << ((unit & (1 << 9)) >> 6)
        if unit & (1 << 8):
            begin = units[node] & 0x7FFFFFFF
            return strings[begin:strings.index(b"\0", begin)]
    return None


def charsmap_of(rules):
    """A charsmap holding `rules` (key bytes → replacement bytes): a darts-clone double array of 256 units (every
    node's 255 neighbours lie inside it, which loading checks), each node at a base of its own."""
    strings, value_of = b"", {}
    for key, replacement in sorted(rules.items()):
        value_of[key] = len(strings)
        strings += replacement + b"\0"
    children = {}
    for key in rules:
        for length in range(len(key)):
            children.setdefault(key[:length], set()).add(key[length])
    units = [0] * 256
    # Unit 0 points at the root, whose base is 0: its children sit at their own byte.
    taken, bases, base_of = {0, *children[b""]}, {0}, {b"": 0}
    pending = [b""]
    while pending:
        node = pending.pop(0)
        base = base_of[node]
        for byte in sorted(children.get(node, ())):
            child = node + bytes([byte])
            labels = children.get(child, set())
            is_key = child in rules
            child_base = next(b for b in range(1, 256) if b not in bases and all(b ^ c not in taken for c in labels)
                              and not (is_key and b in taken))
            bases.add(child_base)
            taken.update(child_base ^ c for c in labels)
            if is_key:  # the value sits at the child's base, under the label 0 no byte matches
                taken.add(child_base)
                units[child_base] = 0x80000000 | value_of[child]
            position = base ^ byte
            units[position] = byte | ((1 << 8) if is_key else 0) | ((position ^ child_base) << 10)
            base_of[child] = child_base
            pending.append(child)
    return struct.pack("<I%dI" % len(units), 4 * len(units), *units) + strings
