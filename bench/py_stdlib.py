"""An ordinary stdlib-heavy script (bench/python_calls.sh): json, re and
email.  Prints the CPU seconds of its work."""
import email.policy
import json
import re
import time
from email import message_from_string

t = time.process_time()
doc = {"users": [{"id": i, "name": "user%d" % i, "tags": ["a", "b"], "score": i * 1.5}
                 for i in range(2000)]}
for _ in range(15):
    json.loads(json.dumps(doc))
pat = re.compile(r"(\w+)@(\w+)\.com")
text = " ".join("name%d@host%d.com" % (i, i) for i in range(5000))
for _ in range(20):
    pat.findall(text)
raw = "From: a@b.com\nTo: c@d.com\nSubject: hi\nContent-Type: text/plain\n\n" + "line\n" * 50
for _ in range(600):
    m = message_from_string(raw, policy=email.policy.default)
    m.get_content()
print("%.4f" % (time.process_time() - t))
