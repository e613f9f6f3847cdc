"""calls.py — Python functions whose call counts are known, for --calls
(tests/e2e/py_calls.sh): a tiny function called many times, a direct
recursion (fib: total/primitive), an indirect one (is_even/is_odd), a
generator (each resumption is a call, as cProfile counts it), a recursive
generator (walk: its resumptions run in the generators' own frames), a method, a
function that raises, a lambda called from C (map), a comprehension and a
generator expression (functions of their own before 3.12's inlining),
asyncio tasks (each resumption of a coroutine is a call), a function run by
two threads (tick: 2 x TICKS calls, which cProfile counts on 3.12+ only), a
function called three times and never sampled (rare: named from its count
alone), calls from frames laid over an ended one's words (leaf), and builtins no other code here calls (a module's function, methods
of C types) and sorted().  Each other part
runs long enough to be sampled (tens of ms).  With an argument 'cprofile
PATH' it runs itself under cProfile and writes "name line ncalls primitive"
lines of this file's functions and of those builtins (pstats' name, line 0)
to PATH."""
import math
import sys

TICKS = 50000

BUILTINS = ("{built-in method math.hypot}", "{method 'bit_count' of 'int' objects}",
            "{method 'swapcase' of 'str' objects}")


def tiny(x):
    return x + 1


def loop(n):
    s = 0
    for _ in range(n):
        s = tiny(s)
    return s


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def is_even(n):
    return True if n == 0 else is_odd(n - 1)


def is_odd(n):
    return False if n == 0 else is_even(n - 1)


def parity(rounds):
    k = 0
    for _ in range(rounds):
        k += is_even(60)
    return k


def counter(n):
    for i in range(n):
        yield i


def drain(rounds):
    t = 0
    for _ in range(rounds):
        t += sum(counter(500))
    return t


def walk(node):
    yield node[0]
    for child in node[1]:
        yield from walk(child)


def tree(depth):
    return (depth, [tree(depth - 1) for _ in range(2)] if depth else [])


def trees(rounds):
    t = tree(8)
    n = 0
    for _ in range(rounds):
        n += sum(walk(t))
    return n


class Box:
    def __init__(self):
        self.v = 0

    def bump(self, k):
        self.v += k
        return self.v


def boxes(n):
    b = Box()
    for i in range(n):
        b.bump(i)
    return b.v


def fails(i):
    if i % 2:
        raise ValueError(i)
    return i


def catches(n):
    c = 0
    for i in range(n):
        try:
            fails(i)
        except ValueError:
            c += 1
    return c


def builtins_part(n):
    s = 0
    for i in range(n):
        s += math.hypot(i, 1.0) + i.bit_count()
    for _ in range(12):
        s += len("aB".swapcase())
    # C work inside the interpreter, in a builtin that keeps its frame while
    # it works (swapcase's C function tail-calls its worker): a row with time
    xs = list(map(float, range(200000)))
    xs.reverse()
    for _ in range(6):
        s += len(sorted(xs))
    return s


def square(n):
    return sum(map(lambda v: v * v, range(n)))


def comprehensions(rounds):
    t = 0
    for i in range(rounds):
        t += len([v for v in range(i % 7)]) + sum(v for v in range(i % 5))
    return t


async def hop(aio, k):
    for _ in range(k):
        await aio.sleep(0)
    return k


async def gather_hops(aio, n):
    return sum(await aio.gather(*(hop(aio, i % 10) for i in range(n))))


def tasks(n):
    import asyncio  # here: the check of main() is that nothing imported atexit

    return asyncio.run(gather_hops(asyncio, n))


def tick(x):
    return x ^ 1


def ticker():
    x = 0
    for _ in range(TICKS):
        x = tick(x)


def threaded():
    import threading

    ts = [threading.Thread(target=ticker) for _ in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()


def leaf(a):
    """Called from shallow and from cover, never nested: every call is
    primitive, though a call from cover finds the words of the one from
    shallow still in memory the interpreter has not written since."""
    b = a + 1
    c = b + 1
    return (a, b, c, a, b, c, a, b, c, a, b, c)[a % 12]


def shallow(y):
    # a small frame: leaf's frame starts a little above it
    return leaf(y)


def wide(y):
    # a large frame: leaf's frame starts where the one from cover ends
    z = y + 1
    return (y, z, y, z, y, z, y, z, y, z, y, z, y, z, y, z, y, z, y, z, y, z, leaf(y))


def cover(y):
    # a frame whose value stack, unwritten at the call, holds the words of
    # the leaf frame that shallow's call left; or whose end is below them
    leaf(y)
    return (y, y, y, y, y, y, y, y, y, y, y, y, y, y, y, y, y, y, y, y, y, y, y, y, y, y)


def stale(n):
    for i in range(n):
        shallow(i)
        cover(i)
        wide(i)
        cover(i)


def rare(x):
    """Called three times, too briefly to be sampled: its row is its count's."""
    return x * 2


def main():
    # the counting imports nothing the program can see
    print("atexit imported:", "atexit" in sys.modules)
    for i in range(3):
        rare(i)
    loop(600000)
    fib(25)
    parity(4000)
    drain(1500)
    trees(100)
    boxes(200000)
    catches(100000)
    builtins_part(70000)
    square(100000)
    comprehensions(30000)
    stale(3)
    tasks(2000)
    threaded()
    print("calls: done")


def cprofile(path):
    import cProfile
    import pstats
    pr = cProfile.Profile()
    pr.runcall(main)
    st = pstats.Stats(pr)
    with open(path, "w") as out:
        for (fn, line, name), (cc, nc, _, _, _) in st.stats.items():
            if fn == "~" and name.startswith("<") and "{%s}" % name[1:-1] in BUILTINS:
                name = "{%s}" % name[1:-1]
            elif fn != __file__:
                continue
            out.write("%s %d %d %d\n" % (name, line, nc, cc))


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "cprofile":
        cprofile(sys.argv[2])
    else:
        main()
