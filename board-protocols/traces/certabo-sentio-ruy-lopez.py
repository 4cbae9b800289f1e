# Writes certabo-sentio-ruy-lopez.raw next to this file: raw Sentio bytes
# (Certabo protocol, occupancy only), one frame per physical step of 1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Bxc6 dxc6 5. O-O
files = "abcdefgh"
occ = set()
for f in files:
    for r in (1, 2, 7, 8):
        occ.add(f + str(r))
def frame():
    out = []
    for r in range(8, 0, -1):
        b = 0
        for i, f in enumerate(files):
            if f + str(r) in occ:
                b |= 0x80 >> i
        out.append(str(b))
    return (":" + " ".join(out) + "\r\n").encode()
steps = [
    ("-", "e2"), ("+", "e4"), ("-", "e7"), ("+", "e5"),
    ("-", "g1"), ("+", "f3"), ("-", "b8"), ("+", "c6"),
    ("-", "f1"), ("+", "b5"), ("-", "a7"), ("+", "a6"),
    ("-", "b5"), ("-", "c6"), ("+", "c6"),
    ("-", "c6"), ("-", "d7"), ("+", "c6"),
    ("-", "e1"), ("+", "g1"), ("-", "h1"), ("+", "f1"),
]
data = frame() + b"L\r\n" + frame()
for op, sq in steps:
    if op == "-":
        occ.discard(sq)
    else:
        occ.add(sq)
    # The board repeats its scan; a repeat carries no news.
    data += frame() + frame()
import os
open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "certabo-sentio-ruy-lopez.raw"), "wb").write(data)
