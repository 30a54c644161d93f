"""A scripted LSP session for lit: opens FILE in the server started by the command after `--`,
prints the published diagnostics, then the answer to each `--hover LINE:COL` and
`--definition LINE:COL` (0-based, UTF-16 columns), one JSON line each, then shuts the server down
and prints its exit status.

    python3 lsp_session.py FILE [--hover L:C]... [--definition L:C]... -- cutec lsp
"""

import json
import subprocess
import sys


def main():
    split = sys.argv.index("--")
    args, server = sys.argv[1:split], sys.argv[split + 1 :]
    path, queries = args[0], list(zip(args[1::2], args[2::2]))
    proc = subprocess.Popen(server, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    next_id = [0]

    def send(message):
        body = json.dumps(dict(jsonrpc="2.0", **message)).encode()
        proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        proc.stdin.flush()

    def receive(wanted):
        while True:
            length = None
            while True:
                line = proc.stdout.readline()
                if not line:
                    sys.exit("the server closed its output")
                if line in (b"\r\n", b"\n"):
                    break
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            message = json.loads(proc.stdout.read(length))
            if wanted(message):
                return message

    def request(method, params):
        next_id[0] += 1
        send(dict(id=next_id[0], method=method, params=params))
        return receive(lambda m: m.get("id") == next_id[0] and "method" not in m)

    uri = "file:///lit/" + path.rsplit("/", 1)[-1]
    request("initialize", dict(processId=None, rootUri=None, capabilities={}))
    send(dict(method="initialized", params={}))
    with open(path, encoding="utf-8") as f:
        send(
            dict(
                method="textDocument/didOpen",
                params=dict(textDocument=dict(uri=uri, languageId="cute", version=1, text=f.read())),
            )
        )
    published = receive(lambda m: m.get("method") == "textDocument/publishDiagnostics")
    print("diagnostics:", json.dumps(published["params"]["diagnostics"], sort_keys=True))
    for kind, at in queries:
        line, col = map(int, at.split(":"))
        method = "textDocument/" + kind.lstrip("-")
        response = request(method, dict(textDocument=dict(uri=uri), position=dict(line=line, character=col)))
        print(kind.lstrip("-") + ":", json.dumps(response.get("result"), sort_keys=True))
    request("shutdown", None)
    send(dict(method="exit"))
    print("exit status:", proc.wait())


main()
