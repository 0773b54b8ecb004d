"""Reads recfmt's MCAP output with the `mcap` package and checks it against `recfmt cat --output ndjson`.

usage: check_mcap.py MCAP_FILE NDJSON_FILE SOURCE_PATH
Checks every channel, schema and message (values equal to the NDJSON rows, in order; log
times from each stream's time column; values of the types their JSON Schema names), the
provenance metadata (SHA-256 of the source), and `foxglove.SceneUpdate` messages when there
are any. Prints one JSON object: the summary's channels with their message counts, schema
names and scene statistics. Exits non-zero with a message on the first mismatch.
"""
import hashlib
import json
import os
import sys
from collections import defaultdict
from datetime import datetime

from mcap.reader import make_reader

mcap_path, ndjson_path, source_path = sys.argv[1:4]


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


rows_by_stream = defaultdict(list)
for line in open(ndjson_path):
    row = json.loads(line)
    rows_by_stream[row.pop("stream")].append(row)

JSON_TYPES = {
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "array": lambda v: isinstance(v, list),
    "null": lambda v: v is None,
    "object": lambda v: isinstance(v, dict),
}


def check_type(value, schema, where):
    types = schema.get("type")
    if types is None:
        return
    if isinstance(types, str):
        types = [types]
    if not any(JSON_TYPES[t](value) for t in types):
        fail(f"{where}: {value!r} is not of type {types}")
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            check_type(item, schema["items"], f"{where}[{i}]")
        if "minItems" in schema and len(value) != schema["minItems"]:
            fail(f"{where}: {len(value)} items, schema says {schema['minItems']}")


def seconds(value, base):
    numer, denom = (int(x) for x in base.split("/"))
    return float(value) * numer / denom


with open(mcap_path, "rb") as f:
    reader = make_reader(f)
    summary = reader.get_summary()
    if summary is None:
        fail("no summary section")
    if not summary.chunk_indexes:
        fail("no chunk index: the file is not chunked and indexed")
    counts = summary.statistics.channel_message_counts
    messages = defaultdict(list)
    scene = []
    for schema, channel, message in reader.iter_messages(log_time_order=False):
        if schema is None or schema.encoding != "jsonschema":
            fail(f"{channel.topic}: schema encoding {schema and schema.encoding}")
        if channel.message_encoding != "json":
            fail(f"{channel.topic}: message encoding {channel.message_encoding}")
        doc = json.loads(message.data)
        if schema.name == "foxglove.SceneUpdate":
            scene.append((message.log_time, doc))
        else:
            messages[channel.topic].append((message.log_time, message.sequence, doc))
    metadata = {m.name: dict(m.metadata) for m in reader.iter_metadata()}

provenance = metadata.get("recfmt.provenance")
if provenance is None:
    fail("no recfmt.provenance metadata record")
for key in ["source.file", "source.path", "source.format", "source.version", "recfmt.recfmt_version", "source.sha256"]:
    if key not in provenance:
        fail(f"provenance lacks {key}: {sorted(provenance)}")
if os.path.isfile(source_path):
    digest = hashlib.sha256(open(source_path, "rb").read()).hexdigest()
    if provenance["source.sha256"] != digest:
        fail(f"source.sha256 {provenance['source.sha256']} is not the file's {digest}")

channels_out = {}
schemas_out = {}
for channel_id, channel in summary.channels.items():
    schema = summary.schemas[channel.schema_id]
    schemas_out[channel.topic] = schema.name
    channels_out[channel.topic] = counts.get(channel_id, 0)
    if schema.name == "foxglove.SceneUpdate":
        continue
    stream = channel.topic[1:]
    meta = channel.metadata
    json_schema = json.loads(schema.data)
    if json_schema.get("title") != stream:
        fail(f"{channel.topic}: schema title {json_schema.get('title')!r}")
    properties = json_schema["properties"]
    expected = rows_by_stream.get(stream, [])
    got = messages.get(channel.topic, [])
    if len(got) != len(expected) or counts.get(channel_id, 0) != len(expected):
        fail(f"{channel.topic}: {len(got)} messages (summary {counts.get(channel_id, 0)}), expected {len(expected)}")
    time_column = meta["recfmt.time_column"]
    base = meta["recfmt.time_base"]
    epoch_ns = 0
    if "recfmt.epoch" in meta:
        epoch = datetime.fromisoformat(meta["recfmt.epoch"].replace("Z", "+00:00"))
        epoch_ns = round(epoch.timestamp() * 1e9)
    previous_log_time = 0
    for i, ((log_time, sequence, doc), row) in enumerate(zip(got, expected)):
        if doc != row:
            fail(f"{channel.topic} message {i}: {doc} != {row}")
        if sequence != i:
            fail(f"{channel.topic} message {i}: sequence {sequence}")
        if set(doc) != set(properties):
            fail(f"{channel.topic}: message keys {sorted(doc)} != schema {sorted(properties)}")
        for name, value in doc.items():
            check_type(value, properties[name], f"{channel.topic}[{i}].{name}")
        t = doc.get(time_column)
        if t is None:
            want = previous_log_time
        else:
            want = max(0, epoch_ns + round(seconds(t, base) * 1e9))
        if abs(log_time - want) > 1000:
            fail(f"{channel.topic} message {i}: log time {log_time}, expected {want} from {time_column}={t}")
        previous_log_time = log_time

scene_entities = 0
if scene:
    for log_time, doc in scene:
        if set(doc) != {"deletions", "entities"}:
            fail(f"scene update keys {sorted(doc)}")
        for entity in doc["entities"]:
            scene_entities += 1
            stamp = entity["timestamp"]
            if stamp["sec"] * 1_000_000_000 + stamp["nsec"] != log_time:
                fail(f"scene entity {entity['id']}: timestamp {stamp} at log time {log_time}")
            pose = entity["cubes"][0]["pose"]
            q = pose["orientation"]
            norm = q["x"] ** 2 + q["y"] ** 2 + q["z"] ** 2 + q["w"] ** 2
            if abs(norm - 1.0) > 1e-9:
                fail(f"scene entity {entity['id']}: orientation is not a unit quaternion")
    if any(b[0] < a[0] for a, b in zip(scene, scene[1:])):
        fail("scene updates go back in time")

print(json.dumps({
    "channels": channels_out,
    "schemas": schemas_out,
    "scene_messages": len(scene),
    "scene_entities": scene_entities,
    "metadata": sorted(metadata),
}))
