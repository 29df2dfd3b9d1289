#!/usr/bin/env python3
"""Which kernels a change touches: the PTX of every kernel entry, at a revision
and in the working tree, compared entry by entry.

    python3 tools/ptx_diff.py REV [--rename 'REGEX=>REPLACEMENT'] [FILE.cu ...]

Default files: attention/kernel/paged_attention_*_hd{64,128,256}.cu (bf16; the
fp16 files instantiate the same templates). Prints one line per entry of the
working tree: IDENTICAL, DIFFERS (with the count of changed lines), or NEW,
and GONE for entries only REV has; exits 0. Kernels whose A/B on the H200 we
want to skip must be IDENTICAL: a change to one instantiation's code can move
another's speed through code generation alone (NOTES.md, Variants), so
"unchanged" is checked here, not assumed.

--rename maps REV's mangled names (of entries and of the shared arrays that
carry them) before matching (a template argument added to a kernel renames
every entry): e.g. 'Li128E((?:Lb[01]E){3})E=>Li128E\\1Lb0EE' matches a
kernel of three bools at REV with the same kernel and a fourth bool `false`
now. Comments, basic-block label numbers (which shift with the entries before
them in the file) and the per-compile hash of anonymous namespaces are
ignored.

Compiles with the flags of tools/cuda.bzl (less -lineinfo, whose line numbers
move with any edit) for sm_90a, in a temporary git worktree for REV. A PTX
difference need not reach the machine code (ptxas may schedule reordered PTX
the same): each DIFFERS line also says whether the entry's SASS (its cubin
.text section, from ptxas) is identical.
"""
import argparse
import difflib
import glob
import os
import re
import struct
import subprocess
import sys
import tempfile

NVCC = os.path.join(os.environ.get("CUDA_PATH", "/usr/local/cuda"), "bin", "nvcc")
PTXAS = os.path.join(os.environ.get("CUDA_PATH", "/usr/local/cuda"), "bin", "ptxas")
FLAGS = ["-ptx", "-gencode=arch=compute_90a,code=sm_90a", "-std=c++17", "-O3",
         "--expt-relaxed-constexpr", "-I.", "-I/usr/include"]
DEFAULT_FILES = "attention/kernel/paged_attention_bf16_hd*.cu"


def compile_ptx(root, source, out):
    subprocess.run([NVCC, *FLAGS, source, "-o", out], cwd=root, check=True)
    with open(out) as f:
        return f.read()


def sass_sections(ptx_path):
    """Mangled entry name -> its machine code (the cubin's .text.NAME bytes)."""
    cubin = ptx_path + ".cubin"
    subprocess.run([PTXAS, "-arch=sm_90a", "-O3", ptx_path, "-o", cubin], check=True,
                   capture_output=True)
    with open(cubin, "rb") as f:
        elf = f.read()
    # ELF64 little-endian: section headers at e_shoff, names in e_shstrndx's.
    (shoff,) = struct.unpack_from("<Q", elf, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", elf, 0x3A)
    headers = [struct.unpack_from("<IIQQQQIIQQ", elf, shoff + i * shentsize)
               for i in range(shnum)]
    names_at = headers[shstrndx][4]
    sections = {}
    for name_offset, _, _, _, offset, size, *_ in headers:
        start = names_at + name_offset
        name = elf[start:elf.index(b"\0", start)].decode()
        if name.startswith(".text."):
            sections[name[len(".text."):]] = elf[offset:offset + size]
    return sections


def entries(ptx):
    """Mangled entry name -> body, labels and the name itself normalised."""
    # An anonymous namespace's mangled name carries a hash that changes from
    # one compile to the next (the merge kernel's): one name for all of them.
    ptx = re.sub(r"_GLOBAL__N__[0-9a-f]+_\d+_\w+?_cu_[0-9a-f]+", "_GLOBAL__N__", ptx)
    result = {}
    for part in re.split(r"(?m)^(?=(?:\.visible |\.weak )?\.entry )", ptx):
        match = re.match(r"(?:\.visible |\.weak )?\.entry\s+(\S+)\(", part)
        if not match:
            continue
        name = match.group(1)
        # The whole text up to the next entry (blocks nest, so no brace
        # closes the entry reliably), without comments (one names the next
        # entry).
        body = re.sub(r"(?m)^\s*//.*\n", "", part.replace(name, "ENTRY"))
        body = re.sub(r"\$L__BB\d+_", "$L__BB_", body)
        result[name] = re.sub(r"\n\s*\n", "\n", body).strip()  # blank lines: the file's order
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("rev")
    parser.add_argument("files", nargs="*")
    parser.add_argument("--rename", action="append", default=[],
                        help="REGEX=>REPLACEMENT applied to REV's entry names")
    args = parser.parse_args()
    root = subprocess.run(["git", "rev-parse", "--show-toplevel"], capture_output=True,
                          text=True, check=True).stdout.strip()
    files = args.files or sorted(os.path.relpath(f, root)
                                 for f in glob.glob(os.path.join(root, DEFAULT_FILES)))
    renames = []
    for rule in args.rename:
        pattern, _, replacement = rule.partition("=>")
        renames.append((re.compile(pattern), replacement))
    with tempfile.TemporaryDirectory() as tmp:
        worktree = os.path.join(tmp, "rev")
        subprocess.run(["git", "worktree", "add", "-q", "--detach", worktree, args.rev],
                       cwd=root, check=True)
        try:
            for source in files:
                print(f"== {source}")
                stem = os.path.basename(source)
                old_path = os.path.join(tmp, "old_" + stem)
                new_path = os.path.join(tmp, "new_" + stem)
                old_ptx = compile_ptx(worktree, source, old_path)
                new = entries(compile_ptx(root, source, new_path))
                # Renamed everywhere in REV's PTX: a kernel's shared arrays
                # carry its mangled name too.
                for pattern, replacement in renames:
                    old_ptx = pattern.sub(replacement, old_ptx)
                renamed = entries(old_ptx)
                old_sass = new_sass = None  # compiled once an entry differs
                for name, body in new.items():
                    if name not in renamed:
                        print("NEW      ", name)
                    elif renamed[name] == body:
                        print("IDENTICAL", name)
                    else:
                        changed = sum(1 for line in difflib.unified_diff(
                            renamed[name].splitlines(), body.splitlines(), lineterm="", n=0)
                            if line[:1] in "+-" and line[:3] not in ("+++", "---"))
                        if new_sass is None:
                            new_sass = sass_sections(new_path)
                            old_sass = {}
                            for old_name, code in sass_sections(old_path).items():
                                for pattern, replacement in renames:
                                    old_name = pattern.sub(replacement, old_name)
                                old_sass[old_name] = code
                        old_code, new_code = old_sass.get(name), new_sass.get(name)
                        sass = ("SASS identical" if old_code == new_code else
                                f"SASS differs, {len(old_code or b'')} -> {len(new_code or b'')} bytes")
                        print(f"DIFFERS   {name} ({changed} lines; {sass})")
                for name in renamed:
                    if name not in new:
                        print("GONE     ", name)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", worktree], cwd=root)
    return 0


if __name__ == "__main__":
    sys.exit(main())
