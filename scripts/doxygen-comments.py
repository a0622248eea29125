#!/usr/bin/env python3
"""Turns the `//` comments of public headers that document a declaration into Doxygen's `///` form.

Used once to convert include/accel/ (kept for headers brought in later); the diff still wants reading by eye.
  - the comment block that opens a file becomes a `/// @file` block (an indented example in it an @code block);
  - a comment block directly above a declaration, in a namespace, class or enum (not in a function body or an
    initializer), becomes `///`, except section rules (`// -- ...`) above it and `Note [...]` blocks;
  - a trailing comment on a declaration line in such a scope becomes `///<`, and so does a comment line below it
    that starts in the same column (its continuation).
Lines already in /// form are left alone, so a second run changes nothing but what it cannot tell: a label over a
group of enumerators (`// unary` in dnn::PointwiseMode) reads as the next enumerator's comment; turn it back to //.
Usage: scripts/doxygen-comments.py FILE...   (rewrites the files in place)
"""
import re
import sys

SCOPE_HEAD = re.compile(r'^\s*(?:(?:inline|export)\s+)?(?:namespace|class|struct|union|enum)\b|^\s*extern\s+"C"')
TEMPLATE_PREFIX = re.compile(r'^\s*template\s*<')


def strip_template_prefix(head):
    """Drops a leading `template <...>` (nested angle brackets allowed) from a statement head."""
    while TEMPLATE_PREFIX.match(head):
        start = head.index('<')
        depth = 0
        for i in range(start, len(head)):
            if head[i] == '<':
                depth += 1
            elif head[i] == '>':
                depth -= 1
                if depth == 0:
                    head = head[i + 1:]
                    break
        else:
            return head
    # A requires-clause between the template head and the declaration.
    return re.sub(r'^\s*requires\b[^{;]*?(?=\b(class|struct|union)\b)', '', head)


def split_code_comment(line):
    """Returns (code, comment) where comment starts at the line's `//` outside string and character literals."""
    i, quote = 0, None
    while i < len(line):
        c = line[i]
        if quote:
            if c == '\\':
                i += 2
                continue
            if c == quote:
                quote = None
        elif c in '"\'':
            # A digit separator (1'000) is not a character literal.
            if c == "'" and i > 0 and line[i - 1].isalnum() and i + 1 < len(line) and line[i + 1].isalnum():
                pass
            else:
                quote = c
        elif line.startswith('//', i):
            return line[:i], line[i:]
        i += 1
    return line, ''


def is_section_rule(comment_text):
    return re.match(r'//\s*--', comment_text) is not None


def convert(lines):
    out = list(lines)
    # 1. The file's opening comment block.
    n = 0
    while n < len(lines) and lines[n].startswith('//') and not lines[0].startswith('///'):
        n += 1
    if n:
        block = ['/// @file'] + doc_lines(lines[:n])
        out[:n] = block
        offset = len(block) - n
    else:
        offset = 0

    # 2. Walk the rest, tracking whether the innermost brace is a scope (namespace, class, enum) or code.
    stack = []  # True for a scope, False for code
    enum_stack = []  # whether each open brace is an enum's
    head = ''
    pending = []  # indices (into out) of the comment-only lines just above the current line
    trailing_column = None  # column of the last `///<` comment, for its continuation lines
    result = out[:n + offset]
    for idx in range(n, len(lines)):
        line = lines[idx]
        stripped = line.strip()
        in_scope = all(stack[-1:]) if stack else True
        if stripped.startswith('///'):
            # Already Doxygen's form: left as it is, so that running the script again changes nothing.
            pending = []
            trailing_column = None
            result.append(line)
            continue
        if stripped.startswith('//'):
            column = line.index('//')
            if trailing_column is not None and column == trailing_column and in_scope:
                result.append(line[:column] + '///<' + line[column + 2:])
                continue
            trailing_column = None
            pending.append(len(result))
            result.append(line)
            continue
        if stripped.startswith('#'):
            # Preprocessor lines carry no braces that matter here; a block above a #define documents the macro.
            if stripped.startswith('#define') and pending and in_scope:
                document_block(result, pending)
            pending = []
            trailing_column = None
            result.append(line)
            continue
        code, comment = split_code_comment(line)
        code_stripped = code.strip()
        if not code_stripped:
            pending = []
            trailing_column = None
            result.append(line)
            continue
        # The block directly above a declaration documents it.
        if pending and in_scope and is_declaration_start(code_stripped, head):
            document_block(result, pending)
        pending = []
        trailing_column = None
        # A trailing comment on a declaration line in a scope documents that declaration.
        # Not: an empty `//` (it only keeps clang-format from joining lines), a NOLINT, a forward declaration's
        # pointer to where the type is defined.
        if comment and in_scope and ends_declaration(code_stripped) and not comment.startswith('///') \
                and comment[2:].strip() and 'NOLINT' not in comment \
                and not re.match(r'^(template\s*<.*>\s*)?(class|struct)\s+\w+;$', code_stripped):
            column = len(code)
            line = code + '///<' + comment[2:]
            trailing_column = column
        result.append(line)
        # Track braces.
        for c in code:
            if c == '{':
                opened = strip_template_prefix(head)
                stack.append(SCOPE_HEAD.match(opened) is not None)
                enum_stack.append(re.match(r'^\s*enum\b', opened) is not None)
                head = ''
            elif c == '}':
                if stack:
                    stack.pop()
                    enum_stack.pop()
                head = ''
            elif c == ';' or (c == ',' and enum_stack and enum_stack[-1]):
                head = ''  # a declaration ends; in an enum, an enumerator does
            else:
                head += c
        head += ' '
        if re.match(r'^(public|private|protected):$', code_stripped):
            head = ''
    return result


def is_declaration_start(code, head):
    if head.strip():
        return False  # the middle of a statement that began on an earlier line
    if code.startswith('}') or re.match(r'^(public|private|protected):', code):
        return False
    return True


def ends_declaration(code):
    if code.startswith('}') or code.endswith('{') or re.match(r'^(public|private|protected):', code):
        return False
    # A member or namespace-scope declaration, or an enumerator.
    return code.endswith(';') or code.endswith(',') or code.endswith('}') or re.match(r'^\w+$', code) is not None


def doc_lines(comment_lines, marker='///'):
    """The `//` lines of one block as `///` lines; an indented example after a blank line becomes an @code block."""
    block = []
    in_code = False
    previous_blank = True
    for line in comment_lines:
        column = line.index('//')
        indent, text = line[:column], line[column + 2:]
        indented = text.startswith('   ') and text.strip() != ''
        if indented and not in_code and previous_blank:
            block.append(indent + marker + ' @code')
            in_code = True
        elif in_code and not indented:
            block.append(indent + marker + ' @endcode')
            in_code = False
        block.append((indent + marker + text).rstrip())
        previous_blank = text.strip() == ''
    if in_code:
        block.append(indent + marker + ' @endcode')
    return block


def document_block(result, pending):
    # A section rule (`// -- observers ---`) heads a part of a class; the lines below it document the declaration.
    while pending and is_section_rule(result[pending[0]].strip()):
        pending = pending[1:]
    if not pending or result[pending[0]].strip().startswith('// Note ['):
        return
    result[pending[0]:] = doc_lines(result[pending[0]:])


def main():
    for path in sys.argv[1:]:
        with open(path) as f:
            lines = f.read().split('\n')
        converted = convert(lines)
        with open(path, 'w') as f:
            f.write('\n'.join(converted))


if __name__ == '__main__':
    main()
