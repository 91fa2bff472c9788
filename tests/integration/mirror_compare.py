#!/usr/bin/python3
"""mirror_compare.py — two mirrors of one site compared (mirror_wget.sh's half in
Python): A is crawl-queue --mirror's host directory, B wget -m -k -p -E's.

Prints one line per difference, "KIND NAME", sorted:
  only-crawl-queue PATH   a file only A has
  only-wget PATH          a file only B has
  bytes PATH              a file that is neither a page nor a stylesheet (no tool
                          rewrites it) and whose bytes differ
  unresolved PAGE         a page of A with a relative link that names no file of A
  link RULE               the links of a page, resolved against the page's place,
                          differ: RULE names the kind (root-slash: an absolute link to
                          a host's root, "http://h" in one and "http://h/" in the
                          other; percent-encoded: "%c3%a0" in one, "\u00e0" in the
                          other); "link other PAGE" for any other kind
and on stderr how many files and links it compared.

  mirror_compare.py A_DIR B_DIR
"""
import collections
import html
import os
import re
import sys
import urllib.parse

# the attributes that hold a URL (srcset's candidates split below); quoted values only:
# python3-doc's Sphinx pages quote every attribute
ATTR = re.compile(rb'<[a-zA-Z](?:[^>"\']|"[^"]*"|\'[^\']*\')*>', re.S)
VALUE = re.compile(rb'\s(href|src|srcset|poster|background|data)\s*=\s*("([^"]*)"|\'([^\']*)\')',
                   re.I)


def files(root):
    out = set()
    for dp, _, fn in os.walk(root):
        for f in fn:
            rel = os.path.relpath(os.path.join(dp, f), root)
            if rel != '.crawlstages-mirror':
                out.add(rel)
    return out


def links(root, rel):
    """The page's links, each as where it leads: "F path#frag" (a file of the mirror),
    "M path" (a relative link to no file), "U url" (absolute: Debian's pages have
    file:///usr/share/doc/... links of their own)."""
    with open(os.path.join(root, rel), 'rb') as f:
        data = f.read()
    base = 'file:///' + urllib.parse.quote(rel)
    out = collections.Counter()
    for tag in ATTR.finditer(data):
        for m in VALUE.finditer(tag.group(0)):
            v = (m.group(3) if m.group(3) is not None else m.group(4)).decode('utf-8', 'replace')
            v = html.unescape(v)
            vals = [c.split()[0] for c in v.split(',') if c.split()] \
                if m.group(1).lower() == b'srcset' else [v.strip()]
            for one in vals:
                u = urllib.parse.urljoin(base, one)
                p = urllib.parse.urlsplit(u)
                if p.scheme == 'file' and not urllib.parse.urlsplit(one).scheme:
                    path = urllib.parse.unquote(p.path)[1:]
                    there = os.path.isfile(os.path.join(root, path))
                    out[('F ' if there else 'M ') + path + '#' + p.fragment] += 1
                else:
                    out['U ' + u] += 1
    return out


def same_url(a, b):
    """Whether two absolute links lead to one URL: the same but for the '/' of an
    empty path, or for percent-encoding."""
    pa, pb = urllib.parse.urlsplit(a), urllib.parse.urlsplit(b)
    pa = pa._replace(path=urllib.parse.unquote(pa.path or '/'))
    pb = pb._replace(path=urllib.parse.unquote(pb.path or '/'))
    return pa == pb


def rules(a_only, b_only):
    """The kinds of a page's link differences (a set of names; 'other' for any pair
    no rule explains)."""
    out = set()
    b_left = list(b_only)
    for k in a_only:
        match = None
        for j in b_left:
            if k.startswith('U ') and j.startswith('U ') and same_url(k[2:], j[2:]):
                match = j
                break
        if match is None:
            out.add('other')
            continue
        b_left.remove(match)
        pa, pb = urllib.parse.urlsplit(k[2:]), urllib.parse.urlsplit(match[2:])
        out.add('root-slash' if (pa.path or '/') == (pb.path or '/') else 'percent-encoded')
    if b_left:
        out.add('other')
    return out


def main():
    a_root, b_root = sys.argv[1], sys.argv[2]
    a, b = files(a_root), files(b_root)
    out = set()
    out.update('only-crawl-queue ' + f for f in a - b)
    out.update('only-wget ' + f for f in b - a)
    nlinks = 0
    for f in sorted(a & b):
        if f.endswith('.html'):
            la, lb = links(a_root, f), links(b_root, f)
            nlinks += sum(la.values())
            if any(k.startswith('M ') for k in la):
                out.add('unresolved ' + f)
            if la != lb:
                a_only = sorted((la - lb).elements())
                b_only = sorted((lb - la).elements())
                r = rules(a_only, b_only)
                out.update('link ' + k for k in r - {'other'})
                if 'other' in r:
                    out.add('link other ' + f)
                    print('  %s: crawl-queue %s, wget %s' % (f, a_only[:3], b_only[:3]),
                          file=sys.stderr)
        elif not f.endswith('.css'):
            with open(os.path.join(a_root, f), 'rb') as x, open(os.path.join(b_root, f), 'rb') as y:
                if x.read() != y.read():
                    out.add('bytes ' + f)
    print('mirror_compare: %d files in one, %d in the other, %d in both; %d links of %d pages'
          % (len(a), len(b), len(a & b), nlinks, sum(f.endswith('.html') for f in a & b)),
          file=sys.stderr)
    for line in sorted(out):
        print(line)


main()
