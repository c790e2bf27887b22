"""MuJoCo's MJCF grammar: which elements may hold which children and attributes.

Transcribed from MuJoCo's schema table (``src/xml/mjcf.schema``, generated into
``src/xml/generated/mjcf_table.inc``; Apache License 2.0).  Each entry is
``element: (attributes, recursive, children)``; ``recursive`` elements may
nest in themselves (``<body>``, ``<default>``).  As in MuJoCo,
``<worldbody>``, ``<frame>`` and ``<replicate>`` are read with the rules of
``<body>``.
"""

SCHEMA = {
    "mujoco": ("model", False, {
        "compiler": (
            "autolimits boundmass boundinertia settotalmass balanceinertia strippath "
            "coordinate angle fitaabb eulerseq meshdir texturedir discardvisual "
            "usethread fusestatic inertiafromgeom inertiagrouprange saveinertial "
            "assetdir alignfree conflict", False, {
            "lengthrange": (
                "mode useexisting uselimit accel maxforce timeconst timestep inttotal "
                "interval tolrange", False, {}),
        }),
        "option": (
            "timestep impratio tolerance ls_tolerance noslip_tolerance ccd_tolerance "
            "sleep_tolerance gravity wind magnetic density viscosity o_margin o_solref "
            "o_solimp o_friction integrator cone jacobian solver iterations "
            "ls_iterations noslip_iterations ccd_iterations sdf_iterations "
            "sdf_initpoints actuatorgroupdisable", False, {
            "flag": (
                "constraint equality frictionloss limit contact spring damper gravity "
                "clampctrl warmstart filterparent actuation refsafe sensor midphase "
                "eulerdamp autoreset nativeccd island multiccd override energy fwdinv "
                "invdiscrete sleep diagexact", False, {}),
        }),
        "size": (
            "memory njmax nconmax nstack nuserdata nkey nuser_body nuser_jnt "
            "nuser_geom nuser_site nuser_cam nuser_tendon nuser_actuator nuser_sensor", False, {}),
        "statistic": ("meaninertia meanmass meansize extent center", False, {}),
        "visual": ("", False, {
            "global": (
                "cameraid orthographic fovy ipd azimuth elevation linewidth glow "
                "offwidth offheight realtime ellipsoidinertia bvactive", False, {}),
            "quality": ("shadowsize offsamples numslices numstacks numquads", False, {}),
            "headlight": ("ambient diffuse specular active", False, {}),
            "map": (
                "stiffness stiffnessrot force torque alpha fogstart fogend znear zfar "
                "haze shadowclip shadowscale actuatortendon", False, {}),
            "scale": (
                "forcewidth contactwidth contactheight connect com camera light "
                "selectpoint jointlength jointwidth actuatorlength actuatorwidth "
                "framelength framewidth constraint slidercrank frustum", False, {}),
            "rgba": (
                "fog haze force inertia joint actuator actuatornegative "
                "actuatorpositive com camera light selectpoint connect contactpoint "
                "contactforce contactfriction contacttorque contactgap rangefinder "
                "constraint slidercrank crankbroken frustum bv bvactive", False, {}),
        }),
        "default": ("class", True, {
            "mesh": ("scale maxhullvert inertia", False, {}),
            "material": (
                "texture texrepeat texuniform emission specular shininess reflectance "
                "metallic roughness rgba", False, {
                "layer": ("texture role", False, {}),
            }),
            "joint": (
                "type group pos axis springdamper limited actuatorfrclimited "
                "solreflimit solimplimit solreffriction solimpfriction stiffness "
                "range actuatorfrcrange actuatorgravcomp margin ref springref "
                "armature damping frictionloss user", False, {}),
            "geom": (
                "type contype conaffinity condim group priority size material "
                "friction mass density shellinertia solmix solref solimp margin gap "
                "surfacevel adhesion fromto pos quat axisangle xyaxes zaxis euler "
                "hfield mesh fitscale rgba fluidshape fluidcoef user", False, {}),
            "site": (
                "type group pos quat axisangle xyaxes zaxis euler material size "
                "fromto rgba user", False, {}),
            "camera": (
                "projection fovy ipd resolution output pos quat axisangle xyaxes "
                "zaxis euler mode focal focalpixel principal principalpixel "
                "sensorsize user", False, {}),
            "light": (
                "directional type castshadow active pos dir bulbradius intensity "
                "range attenuation cutoff softness exponent ambient diffuse specular "
                "mode", False, {}),
            "pair": ("condim friction solref solreffriction solimp gap margin adhesion", False, {}),
            "equality": ("active solref solimp", False, {}),
            "tendon": (
                "group limited range solreflimit solimplimit solreffriction "
                "solimpfriction frictionloss springlength width material margin "
                "stiffness damping rgba user", False, {}),
            "general": (
                "group nsample interp delay ctrlrange user ctrllimited forcelimited "
                "actlimited forcerange actrange gear damping armature cranklength "
                "actdim input velrange ffrange dyntype gaintype biastype dynprm "
                "gainprm biasprm actearly", False, {}),
            "motor": (
                "group nsample interp delay ctrlrange user ctrllimited forcelimited "
                "forcerange gear damping armature cranklength", False, {}),
            "position": (
                "group nsample interp delay ctrlrange user ctrllimited forcelimited "
                "inheritrange forcerange gear damping armature cranklength kp kv "
                "dampratio timeconst", False, {}),
            "velocity": (
                "group nsample interp delay ctrlrange user ctrllimited forcelimited "
                "forcerange gear damping armature cranklength kv", False, {}),
            "intvelocity": (
                "group nsample interp delay ctrlrange user ctrllimited forcelimited "
                "actlimited forcerange actrange inheritrange gear damping armature "
                "cranklength kp kv dampratio", False, {}),
            "orientation": (
                "group nsample interp delay ctrlrange user forcelimited forcerange kp "
                "kv dampratio input", False, {}),
            "pid": (
                "group nsample interp delay ctrlrange user ctrllimited forcelimited "
                "posrange velrange ffrange forcerange inheritrange gear damping "
                "armature cranklength kp kv dampratio ki imax slewmax input", False, {}),
            "damper": (
                "group nsample interp delay ctrlrange user forcelimited forcerange "
                "gear damping armature cranklength kv", False, {}),
            "cylinder": (
                "group nsample interp delay ctrlrange user ctrllimited forcelimited "
                "forcerange gear damping armature cranklength timeconst area diameter "
                "bias", False, {}),
            "muscle": (
                "group nsample interp delay ctrlrange user ctrllimited forcelimited "
                "forcerange gear damping armature cranklength timeconst range force "
                "scale lmin lmax vmax fpmax fvmax", False, {}),
            "adhesion": (
                "group nsample interp delay ctrlrange user forcelimited forcerange "
                "gain", False, {}),
            "dcmotor": (
                "group nsample interp delay ctrlrange user ctrllimited gear damping "
                "armature cranklength motorconst resistance nominal saturation "
                "inductance cogging controller thermal lugre input", False, {}),
        }),
        "extension": ("", False, {
            "plugin": ("plugin", False, {
                "instance": ("name", False, {
                    "config": ("key value", False, {}),
                }),
            }),
        }),
        "asset": ("", False, {
            "mesh": (
                "name class content_type file vertex normal texcoord face refpos refquat "
                "scale smoothnormal maxhullvert inertia builtin params material", False, {
                "plugin": ("plugin instance", False, {
                    "config": ("key value", False, {}),
                }),
            }),
            "hfield": ("name content_type file nrow ncol size elevation", False, {}),
            "skin": ("name file material rgba inflate vertex texcoord face group", False, {
                "bone": ("body bindpos bindquat vertid vertweight", False, {}),
            }),
            "texture": (
                "name type colorspace content_type file gridsize gridlayout fileright "
                "fileleft fileup filedown filefront fileback builtin rgb1 rgb2 mark "
                "markrgb random width height hflip vflip nchannel", False, {}),
            "material": (
                "name class texture texrepeat texuniform emission specular shininess "
                "reflectance metallic roughness rgba", False, {
                "layer": ("texture role", False, {}),
            }),
            "model": ("name file content_type", False, {}),
        }),
        "body": (
            "name childclass pos quat axisangle xyaxes zaxis euler mocap gravcomp sleep "
            "simple user", True, {
            "inertial": (
                "pos quat mass diaginertia axisangle xyaxes zaxis euler fullinertia", False, {}),
            "joint": (
                "name class type group pos axis springdamper limited "
                "actuatorfrclimited solreflimit solimplimit solreffriction "
                "solimpfriction stiffness range actuatorfrcrange actuatorgravcomp "
                "margin ref springref armature damping frictionloss user", False, {}),
            "freejoint": ("name group align", False, {}),
            "geom": (
                "name class type contype conaffinity condim group priority size material "
                "friction mass density shellinertia solmix solref solimp margin gap "
                "surfacevel adhesion fromto pos quat axisangle xyaxes zaxis euler hfield "
                "mesh fitscale rgba fluidshape fluidcoef user", False, {
                "plugin": ("plugin instance", False, {
                    "config": ("key value", False, {}),
                }),
            }),
            "attach": ("model body frame prefix", False, {}),
            "site": (
                "name class type group pos quat axisangle xyaxes zaxis euler material "
                "size fromto rgba user", False, {}),
            "camera": (
                "name class projection fovy ipd resolution output pos quat axisangle "
                "xyaxes zaxis euler mode target focal focalpixel principal "
                "principalpixel sensorsize user", False, {}),
            "light": (
                "name class directional type castshadow active pos dir bulbradius "
                "intensity range attenuation cutoff softness exponent ambient diffuse "
                "specular mode target texture", False, {}),
            "plugin": ("plugin instance", False, {
                "config": ("key value", False, {}),
            }),
            "composite": ("prefix type count offset vertex initial curve size quat", False, {
                "joint": (
                    "kind group stiffness damping armature solreffix solimpfix type "
                    "axis limited range margin solreflimit solimplimit frictionloss "
                    "solreffriction solimpfriction", False, {}),
                "skin": ("texcoord material group rgba inflate subgrid", False, {}),
                "geom": (
                    "type contype conaffinity condim group priority size material "
                    "rgba friction mass density solmix solref solimp margin gap "
                    "surfacevel adhesion", False, {}),
                "site": ("group size material rgba", False, {}),
                "plugin": ("plugin instance", False, {
                    "config": ("key value", False, {}),
                }),
            }),
            "flexcomp": (
                "name type group dim dof count cellcount spacing radius rigid mass "
                "inertiabox scale file point element texcoord material rgba flatskin pos "
                "quat axisangle xyaxes zaxis euler origin", False, {
                "edge": ("equality solref solimp stiffness damping", False, {}),
                "elasticity": ("young poisson damping thickness elastic2d", False, {}),
                "contact": (
                    "contype conaffinity condim priority friction solmix solref "
                    "solimp margin gap internal selfcollide activelayers passive", False, {}),
                "pin": ("id range grid gridrange", False, {}),
                "plugin": ("plugin instance", False, {
                    "config": ("key value", False, {}),
                }),
            }),
        }),
        "deformable": ("", False, {
            "flex": (
                "name group dim radius material rgba flatskin body vertex element "
                "texcoord elemtexcoord node nodecoord cellcount dof", False, {
                "contact": (
                    "contype conaffinity condim priority friction solmix solref "
                    "solimp margin gap internal selfcollide activelayers passive", False, {}),
                "edge": ("stiffness damping", False, {}),
                "elasticity": ("young poisson damping thickness elastic2d", False, {}),
            }),
            "skin": ("name file material rgba inflate vertex texcoord face group", False, {
                "bone": ("body bindpos bindquat vertid vertweight", False, {}),
            }),
        }),
        "contact": ("", False, {
            "pair": (
                "name class geom1 geom2 condim friction solref solreffriction solimp "
                "gap margin adhesion", False, {}),
            "exclude": ("name body1 body2", False, {}),
        }),
        "tendon": ("", False, {
            "spatial": (
                "name class group limited actuatorfrclimited range actuatorfrcrange "
                "solreflimit solimplimit solreffriction solimpfriction frictionloss "
                "springlength width material margin stiffness damping armature rgba user", False, {
                "site": ("site", False, {}),
                "geom": ("geom sidesite", False, {}),
                "pulley": ("divisor", False, {}),
            }),
            "fixed": (
                "name class group limited actuatorfrclimited range actuatorfrcrange "
                "solreflimit solimplimit solreffriction solimpfriction frictionloss "
                "springlength margin stiffness damping armature user", False, {
                "joint": ("joint coef", False, {}),
            }),
        }),
        "equality": ("", False, {
            "connect": (
                "name class active solref solimp body1 body2 anchor site1 site2", False, {}),
            "weld": (
                "name class active solref solimp body1 body2 relpose anchor site1 "
                "site2 torquescale", False, {}),
            "joint": ("name class active solref solimp joint1 joint2 polycoef", False, {}),
            "tendon": ("name class active solref solimp tendon1 tendon2 polycoef", False, {}),
            "flex": ("name class active solref solimp flex", False, {}),
            "flexvert": ("name class active solref solimp flex", False, {}),
            "flexstrain": ("name class active solref solimp flex cell", False, {}),
        }),
        "actuator": ("", False, {
            "general": (
                "name class group nsample interp delay ctrlrange user ctrllimited "
                "forcelimited actlimited forcerange actrange lengthrange gear damping "
                "armature cranklength joint jointinparent tendon slidersite cranksite "
                "site refsite body actdim input velrange ffrange dyntype gaintype "
                "biastype dynprm gainprm biasprm actearly", False, {}),
            "motor": (
                "name class group nsample interp delay ctrlrange user ctrllimited "
                "forcelimited forcerange lengthrange gear damping armature "
                "cranklength joint jointinparent tendon slidersite cranksite site "
                "refsite", False, {}),
            "position": (
                "name class group nsample interp delay ctrlrange user ctrllimited "
                "forcelimited inheritrange forcerange lengthrange gear damping "
                "armature cranklength joint jointinparent tendon slidersite cranksite "
                "site refsite kp kv dampratio timeconst", False, {}),
            "velocity": (
                "name class group nsample interp delay ctrlrange user ctrllimited "
                "forcelimited forcerange lengthrange gear damping armature "
                "cranklength joint jointinparent tendon slidersite cranksite site "
                "refsite kv", False, {}),
            "intvelocity": (
                "name class group nsample interp delay ctrlrange user ctrllimited "
                "forcelimited actlimited forcerange actrange inheritrange lengthrange "
                "gear damping armature cranklength joint jointinparent tendon "
                "slidersite cranksite site refsite kp kv dampratio", False, {}),
            "orientation": (
                "name class group nsample interp delay ctrlrange user forcelimited "
                "forcerange joint site refsite kp kv dampratio input", False, {}),
            "pid": (
                "name class group nsample interp delay ctrlrange user ctrllimited "
                "forcelimited posrange velrange ffrange forcerange inheritrange "
                "lengthrange gear damping armature cranklength joint jointinparent "
                "tendon slidersite cranksite site refsite kp kv dampratio ki imax "
                "slewmax input", False, {}),
            "damper": (
                "name class group nsample interp delay ctrlrange user forcelimited "
                "forcerange lengthrange gear damping armature cranklength joint "
                "jointinparent tendon slidersite cranksite site refsite kv", False, {}),
            "cylinder": (
                "name class group nsample interp delay ctrlrange user ctrllimited "
                "forcelimited forcerange lengthrange gear damping armature "
                "cranklength joint jointinparent tendon slidersite cranksite site "
                "refsite timeconst area diameter bias", False, {}),
            "muscle": (
                "name class group nsample interp delay ctrlrange user ctrllimited "
                "forcelimited forcerange lengthrange gear damping armature "
                "cranklength joint jointinparent tendon slidersite cranksite "
                "timeconst tausmooth range force scale lmin lmax vmax fpmax fvmax", False, {}),
            "adhesion": (
                "name class group nsample interp delay ctrlrange user forcelimited "
                "forcerange body gain", False, {}),
            "dcmotor": (
                "name class group nsample interp delay ctrlrange user ctrllimited "
                "lengthrange gear damping armature cranklength joint jointinparent "
                "tendon slidersite cranksite site refsite motorconst resistance "
                "nominal saturation inductance cogging controller thermal lugre input", False, {}),
            "plugin": (
                "name class group nsample interp delay ctrlrange user plugin instance "
                "ctrllimited forcelimited actlimited forcerange actrange lengthrange "
                "gear damping armature cranklength joint jointinparent site actdim "
                "dyntype dynprm tendon cranksite slidersite actearly", False, {
                "config": ("key value", False, {}),
            }),
        }),
        "sensor": ("", False, {
            "touch": ("name nsample interp delay interval cutoff noise user site", False, {}),
            "accelerometer": (
                "name nsample interp delay interval cutoff noise user site", False, {}),
            "velocimeter": ("name nsample interp delay interval cutoff noise user site", False, {}),
            "gyro": ("name nsample interp delay interval cutoff noise user site", False, {}),
            "force": ("name nsample interp delay interval cutoff noise user site", False, {}),
            "torque": ("name nsample interp delay interval cutoff noise user site", False, {}),
            "magnetometer": (
                "name nsample interp delay interval cutoff noise user site", False, {}),
            "camprojection": (
                "name nsample interp delay interval cutoff noise user site camera", False, {}),
            "rangefinder": (
                "name nsample interp delay interval cutoff noise user site camera "
                "data", False, {}),
            "jointpos": ("name nsample interp delay interval cutoff noise user joint", False, {}),
            "jointvel": ("name nsample interp delay interval cutoff noise user joint", False, {}),
            "tendonpos": ("name nsample interp delay interval cutoff noise user tendon", False, {}),
            "tendonvel": ("name nsample interp delay interval cutoff noise user tendon", False, {}),
            "actuatorpos": (
                "name nsample interp delay interval cutoff noise user actuator", False, {}),
            "actuatorvel": (
                "name nsample interp delay interval cutoff noise user actuator", False, {}),
            "actuatorfrc": (
                "name nsample interp delay interval cutoff noise user actuator", False, {}),
            "jointactuatorfrc": (
                "name nsample interp delay interval cutoff noise user joint", False, {}),
            "tendonactuatorfrc": (
                "name nsample interp delay interval cutoff noise user tendon", False, {}),
            "ballquat": ("name nsample interp delay interval cutoff noise user joint", False, {}),
            "ballangvel": ("name nsample interp delay interval cutoff noise user joint", False, {}),
            "jointlimitpos": (
                "name nsample interp delay interval cutoff noise user joint", False, {}),
            "jointlimitvel": (
                "name nsample interp delay interval cutoff noise user joint", False, {}),
            "jointlimitfrc": (
                "name nsample interp delay interval cutoff noise user joint", False, {}),
            "tendonlimitpos": (
                "name nsample interp delay interval cutoff noise user tendon", False, {}),
            "tendonlimitvel": (
                "name nsample interp delay interval cutoff noise user tendon", False, {}),
            "tendonlimitfrc": (
                "name nsample interp delay interval cutoff noise user tendon", False, {}),
            "framepos": (
                "name nsample interp delay interval cutoff noise user objtype objname "
                "reftype refname", False, {}),
            "framequat": (
                "name nsample interp delay interval cutoff noise user objtype objname "
                "reftype refname", False, {}),
            "framexaxis": (
                "name nsample interp delay interval cutoff noise user objtype objname "
                "reftype refname", False, {}),
            "frameyaxis": (
                "name nsample interp delay interval cutoff noise user objtype objname "
                "reftype refname", False, {}),
            "framezaxis": (
                "name nsample interp delay interval cutoff noise user objtype objname "
                "reftype refname", False, {}),
            "framelinvel": (
                "name nsample interp delay interval cutoff noise user objtype objname "
                "reftype refname", False, {}),
            "frameangvel": (
                "name nsample interp delay interval cutoff noise user objtype objname "
                "reftype refname", False, {}),
            "framelinacc": (
                "name nsample interp delay interval cutoff noise user objtype objname", False, {}),
            "frameangacc": (
                "name nsample interp delay interval cutoff noise user objtype objname", False, {}),
            "subtreecom": ("name nsample interp delay interval cutoff noise user body", False, {}),
            "subtreelinvel": (
                "name nsample interp delay interval cutoff noise user body", False, {}),
            "subtreeangmom": (
                "name nsample interp delay interval cutoff noise user body", False, {}),
            "insidesite": (
                "name nsample interp delay interval cutoff noise user site objtype "
                "objname", False, {}),
            "distance": (
                "name nsample interp delay interval cutoff noise user geom1 geom2 "
                "body1 body2", False, {}),
            "normal": (
                "name nsample interp delay interval cutoff noise user geom1 geom2 "
                "body1 body2", False, {}),
            "fromto": (
                "name nsample interp delay interval cutoff noise user geom1 geom2 "
                "body1 body2", False, {}),
            "contact": (
                "name nsample interp delay interval cutoff noise user geom1 geom2 "
                "body1 body2 subtree1 subtree2 site num data reduce", False, {}),
            "e_potential": ("name nsample interp delay interval cutoff noise user", False, {}),
            "e_kinetic": ("name nsample interp delay interval cutoff noise user", False, {}),
            "clock": ("name nsample interp delay interval cutoff noise user", False, {}),
            "tactile": ("name geom mesh nsample interp delay interval user", False, {}),
            "user": ("name objtype objname datatype needstage dim cutoff noise user", False, {}),
            "plugin": ("name plugin instance cutoff objtype objname reftype refname user", False, {
                "config": ("key value", False, {}),
            }),
        }),
        "custom": ("", False, {
            "numeric": ("name size data", False, {}),
            "text": ("name data", False, {}),
            "tuple": ("name", False, {
                "element": ("objtype objname prm", False, {}),
            }),
        }),
        "keyframe": ("", False, {
            "key": ("name time qpos qvel act mpos mquat ctrl", False, {}),
        }),
    }),
}

#: Elements MuJoCo reads with the rules of ``<body>``.
_BODY_ALIASES = ("worldbody", "frame", "replicate")


def check_grammar(root, error) -> None:
    """Raise ``error`` (the reader's exception class) at the first element or attribute
    MuJoCo's grammar does not have, naming it and the nearest valid spellings.

    MuJoCo refuses such files (``type="cylindre"``, ``densty="100"``); reading on would
    drop what the author meant.  The walk keeps its own stack (any nesting depth).
    """
    from difflib import get_close_matches

    stack = [(root, "mujoco", SCHEMA["mujoco"], "<mujoco>")]
    while stack:
        elem, name, (attrs, recursive, children), where = stack.pop()
        allowed = set(attrs.split())
        for key in elem.attrib:
            if key not in allowed:
                near = get_close_matches(key, sorted(allowed), n=2)
                hint = f" (did you mean {' or '.join(map(repr, near))}?)" if near else ""
                raise error(f"{where}: unknown attribute {key!r}{hint}; MuJoCo refuses it too")
        for child in elem:
            tag = child.tag if isinstance(child.tag, str) else ""
            rule = "body" if tag in _BODY_ALIASES else tag
            if recursive and rule == name:
                row = (attrs, recursive, children)
            elif rule in children:
                row = children[rule]
            else:
                valid = sorted(children) + [name] * recursive
                near = get_close_matches(tag, valid, n=2)
                hint = f" (did you mean {' or '.join(f'<{n}>' for n in near)}?)" if near else ""
                raise error(f"{where}: unknown element <{tag}>{hint}; MuJoCo refuses it too")
            key = "name" if child.get("name") else "class" if child.get("class") else None
            label = f"<{tag} {key}={child.get(key)!r}>" if key else f"<{tag}>"
            stack.append((child, rule, row, f"{label} in {where.split(' in ')[0]}"))
