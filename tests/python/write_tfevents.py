"""Writes TensorFlow event files as tf.summary does (TFRecords of Event
protos with one-element float tensors), in pure Python, for the tests of
the TensorFlowEvent collectors: under <root>/test/ an accuracy of
1 - |x - 0.3| - 0.1/step at steps 1 to 3, under <root>/train/ the same
0.5 lower.

Usage: write_tfevents.py X ROOT
"""
import os, struct, sys, time
def crc32c(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    crc ^= 0xFFFFFFFF
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF
def varint(v):
    out = b""
    while True:
        out += bytes([(v & 0x7F) | (0x80 if v > 0x7F else 0)])
        v >>= 7
        if not v:
            return out
def field(number, data):
    return varint(number << 3 | 2) + varint(len(data)) + data
def record(event):
    length = struct.pack("<Q", len(event))
    return length + struct.pack("<I", crc32c(length)) + event + struct.pack("<I", crc32c(event))
def scalar(tag, value, step):
    tensor = varint(1 << 3) + varint(1) + field(2, b"") + field(5, struct.pack("<f", value))
    summary = field(1, field(1, tag.encode()) + field(8, tensor))
    return record(b"\x09" + struct.pack("<d", time.time()) + b"\x10" + varint(step) + field(5, summary))
x, root = float(sys.argv[1]), sys.argv[2]
for split, shift in (("test", 0.0), ("train", 0.5)):
    os.makedirs(os.path.join(root, split), exist_ok=True)
    with open(os.path.join(root, split, "events.out.tfevents.1.host"), "wb") as f:
        for step in range(1, 4):
            f.write(scalar("accuracy", 1.0 - abs(x - 0.3) - shift - 0.1 / step, step))
