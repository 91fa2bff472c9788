#!/usr/bin/python3
"""html5lib_tokens.py — the start tags html5lib's parser tokenizes in an HTML file, one a
line: the name, then ' name="value"' for each attribute (the first of a name), values
with bytes below 0x20, 0x7f, '"' and '\\' as \\xNN. test_links_tokenizer compares them
with html_tokenizer.c's on tests/fuzz/corpus/tokenizer/.

The file's bytes are read as links_charset.c reads UTF-8: valid UTF-8 as is, each
other byte as latin-1, NUL as U+FFFD.

    /usr/bin/python3 tests/fuzz/html5lib_tokens.py FILE...

With several files, each one's lines follow a line "== FILE".
"""
import codecs
import sys

import html5lib
from html5lib import _tokenizer
from html5lib.constants import tokenTypes


def latin1_fallback(err):
    return err.object[err.start:err.start + 1].decode('latin-1'), err.start + 1


def escape(text):
    out = []
    for b in text.encode('utf-8'):
        if b < 0x20 or b == 0x7f or b in (0x22, 0x5c):
            out.append('\\x%02x' % b)
        else:
            out.append(chr(b))
    return ''.join(out).encode('latin-1').decode('utf-8')


def tags_of(path):
    with open(path, 'rb') as f:
        text = f.read().decode('utf-8', 'latin1_fallback').replace('\0', '\ufffd')
    tags = []
    original = _tokenizer.HTMLTokenizer.__iter__

    def recording(self):
        for token in original(self):
            if token['type'] == tokenTypes['StartTag']:
                attrs = ''.join(' %s="%s"' % (escape(k), escape(v)) for k, v in token['data'].items())
                tags.append(escape(token['name']) + attrs)
            yield token

    _tokenizer.HTMLTokenizer.__iter__ = recording
    try:
        html5lib.HTMLParser().parse(text)
    finally:
        _tokenizer.HTMLTokenizer.__iter__ = original
    return ''.join(t + '\n' for t in tags)


def main():
    codecs.register_error('latin1_fallback', latin1_fallback)
    files = sys.argv[1:]
    for path in files:
        if len(files) > 1:
            sys.stdout.write('== %s\n' % path)
        sys.stdout.write(tags_of(path))


main()
