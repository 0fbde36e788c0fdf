#!/usr/bin/env python3
"""Writes the lynx robot description: its meshes (foot.obj, shank.stl,
thigh.dae), lynx.urdf and lynx.srdf. Run from anywhere; plain Python 3.

lynx is plume's test robot for descriptions "as published": collision
meshes in three formats referred to by package:// URIs, a COLLADA file in
millimetres with y up, a 1e-6 kg placeholder base link with a rank-one
inertia welded to the trunk, two hip links whose inertias miss the triangle
inequality by 2 %, and an SRDF with named states and disabled pairs.
Kinematics, masses and standing posture are those of models/quadruped.urdf.
"""
import math
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
MESHES = os.path.join(HERE, "meshes")
LEGS = [("LF", 1, 1), ("RF", 1, -1), ("LH", -1, 1), ("RH", -1, -1)]  # name, front (+1) / hind, left (+1) / right


def sphere(radius, rings, segments):
    """A latitude/longitude sphere with poles on -z and +z (vertices, CCW triangles)."""
    v = [(0.0, 0.0, -radius)]
    for i in range(1, rings):
        th = math.pi * i / rings  # from the -z pole
        for j in range(segments):
            ph = 2 * math.pi * j / segments
            v.append((radius * math.sin(th) * math.cos(ph), radius * math.sin(th) * math.sin(ph), -radius * math.cos(th)))
    v.append((0.0, 0.0, radius))
    top = len(v) - 1
    t = []
    ring = lambda i, j: 1 + (i - 1) * segments + j % segments
    for j in range(segments):
        t.append((0, ring(1, j + 1), ring(1, j)))
        t.append((top, ring(rings - 1, j), ring(rings - 1, j + 1)))
    for i in range(1, rings - 1):
        for j in range(segments):
            a, b, c, d = ring(i, j), ring(i, j + 1), ring(i + 1, j + 1), ring(i + 1, j)
            t += [(a, b, c), (a, c, d)]
    return v, t


def frustum(r0, r1, z0, z1, segments):
    """A prism along z from z0 (radius r0) to z1 (radius r1), closed by two caps."""
    v = []
    for z, r in ((z0, r0), (z1, r1)):
        for j in range(segments):
            ph = 2 * math.pi * (j + 0.5) / segments
            v.append((r * math.cos(ph), r * math.sin(ph), z))
    n = segments
    t = []
    up = z1 > z0
    for j in range(n):
        a, b, c, d = j, (j + 1) % n, n + (j + 1) % n, n + j
        t += [(a, b, c), (a, c, d)] if up else [(a, c, b), (a, d, c)]
    for j in range(1, n - 1):
        t.append((0, j + 1, j) if up else (0, j, j + 1))
        t.append((n, n + j, n + j + 1) if up else (n, n + j + 1, n + j))
    return v, t


def box(lo, hi):
    v = [(hi[0] if k & 1 else lo[0], hi[1] if k & 2 else lo[1], hi[2] if k & 4 else lo[2]) for k in range(8)]
    t = []
    for f in range(6):
        i, j, k = f // 2, (f // 2 + 1) % 3, (f // 2 + 2) % 3
        side = (1 << i) if f & 1 else 0
        q = [side, side | 1 << j, side | 1 << j | 1 << k, side | 1 << k]
        if not f & 1:
            q[1], q[3] = q[3], q[1]
        t += [(q[0], q[1], q[2]), (q[0], q[2], q[3])]
    return v, t


def write_obj(path, v, t):
    with open(path, "w") as f:
        f.write("# lynx foot: a sphere of radius 22 mm, its pole on -z (written by generate.py)\n")
        for x in v:
            f.write("v %.9f %.9f %.9f\n" % x)
        for a, b, c in t:
            f.write("f %d %d %d\n" % (a + 1, b + 1, c + 1))


def write_stl(path, v, t):
    with open(path, "wb") as f:
        f.write(b"lynx shank (written by generate.py)".ljust(80, b" "))
        f.write(struct.pack("<I", len(t)))
        for a, b, c in t:
            p = [v[a], v[b], v[c]]
            u = [p[1][i] - p[0][i] for i in range(3)]
            w = [p[2][i] - p[0][i] for i in range(3)]
            n = [u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2], u[0] * w[1] - u[1] * w[0]]
            ln = math.sqrt(sum(x * x for x in n)) or 1.0
            f.write(struct.pack("<3f", *[x / ln for x in n]))
            for x in p:
                f.write(struct.pack("<3f", *x))
            f.write(struct.pack("<H", 0))


def write_dae(path, v, t, unit, up):
    pos = " ".join("%.6f %.6f %.6f" % x for x in v)
    idx = " ".join("%d %d %d" % x for x in t)
    with open(path, "w") as f:
        f.write(f"""<?xml version="1.0" encoding="utf-8"?>
<!-- lynx thigh, in millimetres with y up (written by generate.py) -->
<COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema" version="1.4.1">
  <asset><unit name="millimeter" meter="{unit}"/><up_axis>{up}</up_axis></asset>
  <library_geometries><geometry id="thigh" name="thigh"><mesh>
    <source id="thigh-pos"><float_array id="thigh-pos-array" count="{3 * len(v)}">{pos}</float_array>
      <technique_common><accessor source="#thigh-pos-array" count="{len(v)}" stride="3">
        <param name="X" type="float"/><param name="Y" type="float"/><param name="Z" type="float"/>
      </accessor></technique_common></source>
    <vertices id="thigh-vtx"><input semantic="POSITION" source="#thigh-pos"/></vertices>
    <triangles count="{len(t)}"><input semantic="VERTEX" source="#thigh-vtx" offset="0"/><p>{idx}</p></triangles>
  </mesh></geometry></library_geometries>
  <library_visual_scenes><visual_scene id="scene"><node id="thigh-node">
    <instance_geometry url="#thigh"/></node></visual_scene></library_visual_scenes>
  <scene><instance_visual_scene url="#scene"/></scene>
</COLLADA>
""")


def inertial(mass, com, ixx, iyy, izz):
    return (f'    <inertial>\n      <origin xyz="{com}" rpy="0 0 0"/>\n      <mass value="{mass}"/>\n'
            f'      <inertia ixx="{ixx}" ixy="0" ixz="0" iyy="{iyy}" iyz="0" izz="{izz}"/>\n    </inertial>\n')


def mesh(uri, origin="0 0 0", rpy="0 0 0"):
    return (f'      <origin xyz="{origin}" rpy="{rpy}"/>\n'
            f'      <geometry><mesh filename="package://lynx_description/meshes/{uri}"/></geometry>\n')


def urdf():
    out = ["""<?xml version="1.0"?>
<!-- lynx: plume's 12-joint test quadruped described as robots are published (written by
     generate.py; see ../README.md). Load with a free-flyer root on `base`. -->
<robot name="lynx">
  <!-- A placeholder base link (1e-6 kg, rank-one inertia), welded to the trunk. -->
  <link name="base">
""" + inertial("1e-06", "0 0 0", "1e-06", "0", "0") + """  </link>
  <joint name="base_to_trunk" type="fixed">
    <parent link="base"/>
    <child link="trunk"/>
    <origin xyz="0 0 0" rpy="0 0 0"/>
  </joint>
  <link name="trunk">
""" + inertial("12", "0 0 0", "0.0769", "0.3169", "0.365") + """    <visual><geometry><box size="0.55 0.25 0.12"/></geometry></visual>
    <collision><geometry><box size="0.55 0.25 0.12"/></geometry></collision>
  </link>
"""]
    for leg, fx, ly in LEGS:
        # LF and RH hips: principal moments 2 % outside the triangle inequality.
        hip_ixx = "0.00102" if leg in ("LF", "RH") else "0.00106666666667"
        hip_iyy = "0.0005" if leg in ("LF", "RH") else "0.00136666666667"
        hip_izz = "0.0005" if leg in ("LF", "RH") else "0.00136666666667"
        out.append(f"""
  <joint name="{leg}_HAA" type="revolute">
    <parent link="trunk"/>
    <child link="{leg}_hip"/>
    <origin xyz="{0.25 * fx} {0.09 * ly} 0" rpy="0 0 0"/>
    <axis xyz="1 0 0"/>
    <limit lower="-0.8" upper="0.8" effort="35" velocity="21"/>
  </joint>
  <link name="{leg}_hip">
""" + inertial("1", f"0 {0.04 * ly} 0", hip_ixx, hip_iyy, hip_izz) + f"""    <visual>
      <origin xyz="0 {0.04 * ly} 0" rpy="0 1.5707963267948966 0"/>
      <geometry><cylinder radius="0.045" length="0.1"/></geometry>
    </visual>
  </link>
  <joint name="{leg}_HFE" type="revolute">
    <parent link="{leg}_hip"/>
    <child link="{leg}_thigh"/>
    <origin xyz="0 {0.08 * ly} 0" rpy="0 0 0"/>
    <axis xyz="0 1 0"/>
    <limit lower="-1.5" upper="3" effort="35" velocity="21"/>
  </joint>
  <link name="{leg}_thigh">
""" + inertial("1.2", "0 0 -0.06", "0.00916", "0.00925", "0.00041") + f"""    <visual>
{mesh("thigh.dae")}    </visual>
    <collision>
{mesh("thigh.dae")}    </collision>
  </link>
  <joint name="{leg}_KFE" type="revolute">
    <parent link="{leg}_thigh"/>
    <child link="{leg}_shank"/>
    <origin xyz="0 0 -0.3" rpy="0 0 0"/>
    <axis xyz="0 1 0"/>
    <limit lower="-2.7" upper="0" effort="45" velocity="21"/>
  </joint>
  <link name="{leg}_shank">
""" + inertial("0.3", "0 0 -0.12", "0.0022725", "0.0022725", "4.5e-05") + f"""    <visual>
{mesh("shank.stl")}    </visual>
    <collision>
{mesh("shank.stl")}    </collision>
  </link>
  <joint name="{leg}_foot_joint" type="fixed">
    <parent link="{leg}_shank"/>
    <child link="{leg}_foot"/>
    <origin xyz="0 0 -0.3" rpy="0 0 0"/>
  </joint>
  <!-- The foot mesh's pole points straight down in the standing posture (shank pitched -0.8 rad). -->
  <link name="{leg}_foot">
""" + inertial("0.05", "0 0 0", "8e-06", "8e-06", "8e-06") + f"""    <visual>
{mesh("foot.obj", rpy="0 0.8 0")}    </visual>
    <collision>
{mesh("foot.obj", rpy="0 0.8 0")}    </collision>
  </link>
""")
    out.append("</robot>\n")
    return "".join(out)


def srdf():
    joints = [f"{leg}_{j}" for leg, _, _ in LEGS for j in ("HAA", "HFE", "KFE")]
    s = ['<?xml version="1.0"?>\n<!-- lynx: semantic description (written by generate.py) -->\n<robot name="lynx">\n',
         '  <group name="legs">\n']
    s += [f'    <joint name="{j}"/>\n' for j in joints]
    s.append("  </group>\n")
    for name, hfe, kfe in (("standing", 0.8, -1.6), ("crouching", 1.1, -2.2)):
        s.append(f'  <group_state name="{name}" group="legs">\n')
        for leg, _, _ in LEGS:
            s.append(f'    <joint name="{leg}_HAA" value="0"/>\n    <joint name="{leg}_HFE" value="{hfe}"/>\n'
                     f'    <joint name="{leg}_KFE" value="{kfe}"/>\n')
        s.append("  </group_state>\n")
    for leg, _, _ in LEGS:
        s.append(f'  <disable_collisions link1="{leg}_thigh" link2="{leg}_shank" reason="Adjacent"/>\n')
        s.append(f'  <disable_collisions link1="{leg}_shank" link2="{leg}_foot" reason="Adjacent"/>\n')
        s.append(f'  <disable_collisions link1="trunk" link2="{leg}_thigh" reason="Never"/>\n')
    s.append("</robot>\n")
    return "".join(s)


def main():
    write_obj(os.path.join(MESHES, "foot.obj"), *sphere(0.022, 10, 16))
    write_stl(os.path.join(MESHES, "shank.stl"), *frustum(0.018, 0.014, -0.03, -0.27, 8))
    # Thigh: 50 x 40 mm across, from 20 mm to 280 mm below the hip; in the file
    # (y up, mm) its length runs along -y and its depth along z.
    write_dae(os.path.join(MESHES, "thigh.dae"), *box((-25.0, -280.0, -20.0), (25.0, -20.0, 20.0)), 0.001, "Y_UP")
    with open(os.path.join(HERE, "urdf", "lynx.urdf"), "w") as f:
        f.write(urdf())
    with open(os.path.join(HERE, "srdf", "lynx.srdf"), "w") as f:
        f.write(srdf())


if __name__ == "__main__":
    main()
