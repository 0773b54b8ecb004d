"""Checks an OpenSCENARIO file recfmt wrote, with the tools a scenario author uses.

usage: check_xosc.py XOSC XSD [THINNED TOLERANCE]

Validates XOSC against the ASAM schema XSD with xmlschema, reads it back with
scenariogeneration's parser, and prints one JSON line: the version, the scenario objects
scenariogeneration found, and per entity the number of trajectory vertices. With THINNED
(the same log written with a tolerance), checks that every vertex of XOSC lies within
TOLERANCE metres of the path THINNED's vertices give at its time, and that both agree at
their ends.
"""

import json
import math
import sys
import warnings
import xml.etree.ElementTree as ET

import xmlschema
from scenariogeneration import xosc


def tracks(path):
    """Per entity: the (time, x, y, z) vertices of its FollowTrajectoryAction."""
    out = {}
    for group in ET.parse(path).getroot().iter("ManeuverGroup"):
        refs = [e.get("entityRef") for e in group.iter("EntityRef")]
        for polyline in group.iter("Polyline"):
            points = []
            for vertex in polyline.iter("Vertex"):
                p = vertex.find("Position/WorldPosition")
                points.append(
                    (float(vertex.get("time")), float(p.get("x")), float(p.get("y")), float(p.get("z")))
                )
            out[refs[0]] = points
    return out


def at(path, t):
    """Where a polyline puts the entity at time t (linear in time)."""
    for a, b in zip(path, path[1:]):
        if a[0] <= t <= b[0]:
            span = b[0] - a[0]
            u = (t - a[0]) / span if span > 0 else 0.0
            return tuple(a[i] + u * (b[i] - a[i]) for i in (1, 2, 3))
    raise AssertionError(f"time {t} outside the thinned path")


def main():
    path, xsd = sys.argv[1], sys.argv[2]
    xmlschema.XMLSchema(xsd).validate(path)
    # scenariogeneration warns when its own copy of the schema rejects the file: fail then.
    warnings.simplefilter("error")
    scenario = xosc.ParseOpenScenario(path)
    objects = scenario.entities.scenario_objects
    header = ET.parse(path).getroot().find("FileHeader")
    result = {
        "version": f"{header.get('revMajor')}.{header.get('revMinor')}",
        "objects": len(objects),
        "names": sorted(o.name for o in objects),
        "vertices": {name: len(points) for name, points in tracks(path).items()},
        "road": scenario.roadnetwork.road_file,
    }
    if len(sys.argv) > 3:
        thinned, tolerance = tracks(sys.argv[3]), float(sys.argv[4])
        worst = 0.0
        for name, full in tracks(path).items():
            kept = thinned[name]
            assert kept[0] == full[0] and kept[-1] == full[-1], name
            for t, x, y, z in full:
                px, py, pz = at(kept, t)
                worst = max(worst, math.dist((x, y, z), (px, py, pz)))
        assert worst <= tolerance + 1e-6, f"a left-out vertex is {worst} m off"
        result["worst"] = worst
        result["thinned"] = sum(len(p) for p in thinned.values())
    print(json.dumps(result))


if __name__ == "__main__":
    main()
