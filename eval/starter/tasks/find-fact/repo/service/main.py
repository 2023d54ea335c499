import os
import tomllib


def listen_address(defaults_path="config/defaults.toml"):
    with open(defaults_path, "rb") as f:
        server = tomllib.load(f)["server"]
    port = int(os.environ.get("INVENTORY_PORT", server["port"]))
    return server["host"], port
