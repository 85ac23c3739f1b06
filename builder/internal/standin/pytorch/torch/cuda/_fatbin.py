"""The GPU code of an ELF file's .nv_fatbin section, as cuobjdump --list-elf/--list-ptx lists it.

Layout (builder/fatbin reads the same): a 16-byte fatbin header (u32 magic 0xBA55ED50, u16 version,
u16 header size, u64 size of the entries), then entries with a header of u16 kind (1 PTX, 2 cubin),
u16, u32 header size, u64 payload size, ..., u32 arch at offset 28.
"""
import struct

_MAGIC = 0xBA55ED50


def _section(data, name):
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    def header(i):
        return struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize)
    strtab = header(shstrndx)[4]
    for i in range(shnum):
        nameoff, _, _, _, off, size = header(i)
        end = data.index(b"\0", strtab + nameoff)
        if data[strtab + nameoff:end] == name:
            return data[off:off + size]
    return b""


def entries(path):
    """(kind, arch) of each entry, kind "cubin" or "ptx", arch 87 for sm_87."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF":
        return []
    sec = _section(data, b".nv_fatbin")
    out, pos = [], 0
    while pos + 16 <= len(sec):
        magic, _, hsize, size = struct.unpack_from("<IHHQ", sec, pos)
        if magic != _MAGIC:
            break
        e, end = pos + hsize, pos + hsize + size
        while e < end:
            kind, _, ehsize, payload = struct.unpack_from("<HHIQ", sec, e)
            arch, = struct.unpack_from("<I", sec, e + 28)
            out.append(("ptx" if kind == 1 else "cubin", arch))
            e += ehsize + payload
        pos = end
    return out
