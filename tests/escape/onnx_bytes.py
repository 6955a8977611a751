"""tests/escape/onnx_bytes.py — ONNX models whose names are arbitrary bytes.

Python's protobuf refuses string fields that are not valid UTF-8, but an
ONNX file from elsewhere can hold any bytes there (ncc must cope). So the
model is built with placeholder names, serialized, and the placeholders are
swapped for the wanted bytes by re-encoding the wire format, guided by the
message descriptors (a length-delimited field is re-encoded when it is a
message, replaced when it is a string holding a placeholder).
"""
from google.protobuf import descriptor as _d


def _varint(b, i):
    x = s = 0
    while True:
        c = b[i]
        i += 1
        x |= (c & 0x7F) << s
        s += 7
        if c < 0x80:
            return x, i


def _put_varint(x):
    out = bytearray()
    while True:
        c = x & 0x7F
        x >>= 7
        if x:
            out.append(c | 0x80)
        else:
            out.append(c)
            return bytes(out)


def _rewrite(desc, b, swap):
    out = bytearray()
    i = 0
    while i < len(b):
        start = i
        tag, i = _varint(b, i)
        num, wt = tag >> 3, tag & 7
        if wt == 0:
            _, i = _varint(b, i)
        elif wt == 1:
            i += 8
        elif wt == 5:
            i += 4
        elif wt == 2:
            n, j = _varint(b, i)
            body = b[j:j + n]
            i = j + n
            f = desc.fields_by_number.get(num)
            if f is not None and f.type == _d.FieldDescriptor.TYPE_MESSAGE:
                body = _rewrite(f.message_type, body, swap)
            elif f is not None and f.type == _d.FieldDescriptor.TYPE_STRING:
                body = swap.get(bytes(body), bytes(body))
            else:
                out += b[start:i]
                continue
            out += _put_varint(tag) + _put_varint(len(body)) + body
            continue
        else:
            raise ValueError("wire type %d" % wt)
        out += b[start:i]
    return bytes(out)


class Names:
    """Placeholder str for each wanted byte string; .swap(model) -> bytes."""

    def __init__(self):
        self.map = {}

    def __call__(self, raw):
        key = "ph%06d" % len(self.map)
        self.map[key.encode()] = raw
        return key

    def serialize(self, model):
        return _rewrite(model.DESCRIPTOR, model.SerializeToString(), self.map)
