"""A GenericAgent-style caller using only Python's standard library: post the INTERRUPT payload, long-poll."""
import json
import os
import sys
import urllib.request

BASE, TOKEN, CHANNEL = os.environ["PARLEY_URL"], os.environ["PARLEY_TOKEN"], os.environ["PARLEY_CHANNEL"]


def call(method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(BASE + path, method=method, data=data,
                                     headers={"Authorization": "Bearer " + TOKEN, "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=70) as response:
        return json.load(response)


interrupt = {"status": "INTERRUPT", "intent": "HUMAN_INTERVENTION",
             "data": {"question": "Which region should the agent deploy to?", "candidates": ["eu-west", "us-east"]}}
ask = call("POST", "/v1/asks", {"channel": CHANNEL, "interrupt": interrupt, "metadata": {"agent": "python"}})
print("created", ask["id"], flush=True)
while ask["status"] == "pending":
    ask = call("GET", "/v1/asks/%s?wait=5" % ask["id"])
print("result", json.dumps(ask), flush=True)
sys.exit(0)
