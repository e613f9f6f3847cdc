"""A small Python program to profile: builds a text, counts its words, and
scores each line against the most frequent ones.

    cbottleneck python3 examples/python/wordfreq.py [LINES]

Its time goes to tokenize() (the re module, a C extension), count() (a
collections.Counter), and score_lines(), a pure-Python loop that calls
overlap() for every line: the report names them as file:line(function).
"""
import collections
import re
import sys

WORDS = ("profile sample stack frame thread python native kernel cuda launch "
         "kernel copy memory report table line function module symbol").split()


def make_text(lines):
    out = []
    for i in range(lines):
        out.append(" ".join(WORDS[(i * 7 + j * 3) % len(WORDS)] for j in range(12 + i % 5)))
    return out


def tokenize(lines):
    word = re.compile(r"[a-z]+")
    return [word.findall(line) for line in lines]


def count(tokens):
    c = collections.Counter()
    for t in tokens:
        c.update(t)
    return c


def overlap(line, top):
    n = 0
    for w in line:
        if w in top:
            n += len(w)
    return n


def score_lines(tokens, top):
    return sorted(range(len(tokens)), key=lambda i: -overlap(tokens[i], top))


def main():
    lines = int(sys.argv[1]) if len(sys.argv) > 1 else 200000
    text = make_text(lines)
    tokens = tokenize(text)
    freq = count(tokens)
    top = {w for w, _ in freq.most_common(5)}
    best = score_lines(tokens, top)
    print("%d lines, %d distinct words, best line %d" % (lines, len(freq), best[0]))


if __name__ == "__main__":
    main()
