"""Reads an extension image archive of tools/image.sh (an OCI image layout as a tar) the way a
container runtime resolves it: the tag's image index, the image of one architecture in it, that
image's layers applied in order. For tests/system/image.sh; nothing here trusts the layout beyond
what the OCI image spec says.

Usage:
  image_oci.py ARCHIVE platforms          each image of the index: "<os>/<arch>[/<variant>] <digest>"
  image_oci.py ARCHIVE unpack ARCH DIR    applies ARCH's layers into DIR; prints one line:
      <layers> <version label> <major label> <cnpg pgmajor> <cnpg os> <revision> <user> <arch>
      <ELF machine of lib/pg_idgen.so> <the files, sorted, space-separated>
  image_oci.py ARCHIVE file ARCH PATH DEST   copies one file of ARCH's image to DEST
"""

import io
import json
import sys
import tarfile

INDEX = "application/vnd.oci.image.index.v1+json"
ELF_MACHINES = {62: "x86-64", 183: "aarch64"}


def main():
    archive, command = sys.argv[1], sys.argv[2]
    with tarfile.open(archive) as oci:

        def blob(digest):
            return oci.extractfile("./blobs/sha256/" + digest.split(":")[1]).read()

        top = json.loads(oci.extractfile("./index.json").read())
        (tagged,) = top["manifests"]
        if tagged["mediaType"] != INDEX:
            sys.exit(f"the tag names a {tagged['mediaType']}, not an image index")
        images = json.loads(blob(tagged["digest"]))["manifests"]

        def image(arch):
            found = [m for m in images if m["platform"]["architecture"] == arch]
            if len(found) != 1:
                sys.exit(f"{len(found)} images for {arch} in the index")
            return json.loads(blob(found[0]["digest"]))

        if command == "platforms":
            for m in images:
                p = m["platform"]
                print("/".join(filter(None, [p["os"], p["architecture"], p.get("variant")])), m["digest"])
        elif command == "unpack":
            arch, dest = sys.argv[3], sys.argv[4]
            manifest = image(arch)
            config = json.loads(blob(manifest["config"]["digest"]))
            names, library = [], b""
            for layer in manifest["layers"]:
                with tarfile.open(fileobj=io.BytesIO(blob(layer["digest"]))) as t:
                    names += [m.name for m in t.getmembers() if m.isfile()]
                    if "lib/pg_idgen.so" in t.getnames():
                        library = t.extractfile("lib/pg_idgen.so").read(20)
                    t.extractall(dest, filter="data")
            machine = int.from_bytes(library[18:20], "little") if library[:4] == b"\x7fELF" else 0
            labels = config["config"]["Labels"]
            print(len(manifest["layers"]), labels["org.opencontainers.image.version"],
                  labels["io.pg-idgen.postgresql.major"], labels.get("io.cloudnativepg.image.base.pgmajor"),
                  labels.get("io.cloudnativepg.image.base.os"), labels.get("org.opencontainers.image.revision"),
                  config["config"].get("User"), config["architecture"], ELF_MACHINES.get(machine, f"machine-{machine}"),
                  " ".join(sorted(names)))
        elif command == "file":
            arch, path, dest = sys.argv[3:6]
            for layer in image(arch)["layers"]:
                with tarfile.open(fileobj=io.BytesIO(blob(layer["digest"]))) as t:
                    if path in t.getnames():
                        with open(dest, "wb") as f:
                            f.write(t.extractfile(path).read())
                        return
            sys.exit(f"no {path} in the {arch} image")
        else:
            sys.exit(f"unknown command {command}")


if __name__ == "__main__":
    main()
