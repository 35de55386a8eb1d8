#!/usr/bin/env python3
"""Dev-time authoring aid for domains/mineral-lab.yaml, an original kumo-gen
domain (not from KUMO). The property table below is the source of truth: a
state of a test rules out every mineral whose properties could not show it.
Usage: scripts/mineral-lab.py  (rewrites domains/mineral-lab.yaml)
"""
S = {  # state lists per str action, in order
 "Streak test": ["white or colorless", "black", "gray to lead-gray", "red-brown", "yellow-brown", "greenish black", "green", "blue", "scarlet", "yellow", "golden yellow", "copper-red", "silver-white"],
 "Luster observation": ["metallic", "submetallic", "vitreous", "adamantine", "resinous", "pearly", "silky", "greasy", "earthy"],
 "Cleavage examination": ["none (conchoidal or uneven fracture)", "one perfect direction", "two directions", "three directions at 90 degrees", "three directions not at 90 degrees", "four directions (octahedral)", "six directions (dodecahedral)"],
 "Dilute HCl test": ["vigorous fizzing", "fizzes only when powdered", "no reaction"],
 "Hand magnet test": ["strongly attracted", "weakly attracted", "not attracted"],
 "Shortwave UV fluorescence": ["bright fluorescence", "no fluorescence"],
 "Taste test": ["salty", "bitter", "no taste"],
 "Crystal system determination": ["isometric", "hexagonal or trigonal", "tetragonal", "orthorhombic", "monoclinic", "triclinic", "amorphous"],
 "Flame test": ["crimson red", "yellow-orange", "violet", "green", "blue-green", "no distinctive color"],
 "Double refraction check": ["strong double image", "no double image"],
 "Color observation": ["colorless or white", "black", "gray or silver", "brass or gold yellow", "green", "blue", "red or pink", "purple", "brown", "yellow", "copper-red"],
 "Crystal habit observation": ["cubic", "octahedral", "prismatic or columnar", "tabular or platy", "fibrous or acicular", "botryoidal or massive", "dodecahedral", "rhombohedral", "dendritic or nuggets"],
 "Tenacity test": ["brittle", "malleable and sectile", "flexible and elastic", "flexible but not elastic"],
 "Water solubility test": ["dissolves readily", "insoluble"],
 "Electrical conductivity test": ["conducts", "does not conduct"],
 "Transparency check": ["transparent", "translucent", "opaque"],
 "Odor test (struck or heated)": ["sulfurous smell", "garlic smell", "earthy clay smell", "no odor"],
 "Striation inspection": ["parallel striations on faces", "twinning striations on cleavage", "no striations"],
 "Feel test": ["soapy or greasy", "ordinary"],
 "Optical effects check": ["play of color", "labradorescence", "none"],
}
N = {  # numeric actions: (type, unit, states)
 "Mohs hardness test": ("float", "Mohs", [(1.0, 2.5), (2.5, 4.0), (4.0, 5.5), (5.5, 7.0), (7.0, 10.0)]),
 "Specific gravity measurement": ("float", "g/cm³", [(1.5, 2.5), (2.5, 3.0), (3.0, 4.0), (4.0, 6.0), (6.0, 20.0)]),
 "Magnetic susceptibility measurement": ("float", "10⁻³ SI", [(-1.0, 1.0), (1.0, 100.0), (100.0, 20000.0)]),
 "Water release on heating": ("float", "wt% H₂O", [(0.0, 2.0), (2.0, 8.0), (8.0, 25.0)]),
 "Geiger counter reading": ("int", "counts/min", [(0, 100), (100, 10000), (10000, 1000000)]),
}
ORDER = ["Mohs hardness test", "Specific gravity measurement", "Streak test", "Luster observation", "Cleavage examination", "Dilute HCl test", "Hand magnet test", "Shortwave UV fluorescence", "Taste test", "Crystal system determination", "Flame test", "Double refraction check", "Color observation", "Crystal habit observation", "Tenacity test", "Water solubility test", "Electrical conductivity test", "Transparency check", "Odor test (struck or heated)", "Striation inspection", "Feel test", "Optical effects check", "Magnetic susceptibility measurement", "Water release on heating", "Geiger counter reading"]
DEFAULT = {"Dilute HCl test": "no reaction", "Hand magnet test": "not attracted", "Shortwave UV fluorescence": "no fluorescence", "Taste test": "no taste", "Flame test": "no distinctive color", "Double refraction check": "no double image", "Water solubility test": "insoluble", "Electrical conductivity test": "does not conduct", "Odor test (struck or heated)": "no odor", "Striation inspection": "no striations", "Feel test": "ordinary", "Optical effects check": "none",
  "Magnetic susceptibility measurement": (-0.1, 0.5), "Water release on heating": (0.0, 0.5), "Geiger counter reading": (0, 60)}
A = {"H": "Mohs hardness test", "SG": "Specific gravity measurement", "st": "Streak test", "lu": "Luster observation", "cl": "Cleavage examination", "hcl": "Dilute HCl test", "mag": "Hand magnet test", "uv": "Shortwave UV fluorescence", "ta": "Taste test", "sys": "Crystal system determination", "fl": "Flame test", "dr": "Double refraction check", "co": "Color observation", "ha": "Crystal habit observation", "te": "Tenacity test", "so": "Water solubility test", "ec": "Electrical conductivity test", "tr": "Transparency check", "od": "Odor test (struck or heated)", "sr": "Striation inspection", "fe": "Feel test", "op": "Optical effects check", "chi": "Magnetic susceptibility measurement", "w": "Water release on heating", "rad": "Geiger counter reading"}
def m(**kw): return kw
W="white or colorless"; V="vitreous"; TT="transparent"; TL="translucent"; OP="opaque"
M = {
 "Quartz": m(H=(7,7), SG=(2.65,2.66), st=[W], lu=[V], cl=["none (conchoidal or uneven fracture)"], sys=["hexagonal or trigonal"], co=["colorless or white","purple","brown","red or pink","yellow","gray or silver","black"], ha=["prismatic or columnar","botryoidal or massive"], te=["brittle"], tr=[TT,TL,OP], sr=["parallel striations on faces","no striations"]),
 "Opal": m(H=(5.5,6.5), SG=(1.9,2.3), st=[W], lu=[V,"resinous","pearly","greasy"], cl=["none (conchoidal or uneven fracture)"], sys=["amorphous"], co=["colorless or white","yellow","red or pink","brown","blue","black"], ha=["botryoidal or massive"], te=["brittle"], tr=[TT,TL,OP], uv=["bright fluorescence","no fluorescence"], op=["play of color","none"], w=(3,10)),
 "Calcite": m(H=(3,3), SG=(2.71,2.71), st=[W], lu=[V,"pearly"], cl=["three directions not at 90 degrees"], hcl=["vigorous fizzing"], uv=["bright fluorescence","no fluorescence"], sys=["hexagonal or trigonal"], fl=["crimson red","no distinctive color"], dr=["strong double image","no double image"], co=["colorless or white","yellow","brown","red or pink","green","blue","gray or silver"], ha=["rhombohedral","prismatic or columnar","tabular or platy","botryoidal or massive"], te=["brittle"], tr=[TT,TL]),
 "Dolomite": m(H=(3.5,4), SG=(2.84,2.86), st=[W], lu=[V,"pearly"], cl=["three directions not at 90 degrees"], hcl=["fizzes only when powdered"], sys=["hexagonal or trigonal"], co=["colorless or white","red or pink","gray or silver","brown"], ha=["rhombohedral","botryoidal or massive"], te=["brittle"], tr=[TT,TL], uv=["bright fluorescence","no fluorescence"]),
 "Fluorite": m(H=(4,4), SG=(3.18,3.18), st=[W], lu=[V], cl=["four directions (octahedral)"], uv=["bright fluorescence","no fluorescence"], sys=["isometric"], co=["purple","green","blue","yellow","colorless or white","red or pink"], ha=["cubic","octahedral"], te=["brittle"], tr=[TT,TL]),
 "Halite": m(H=(2.5,2.5), SG=(2.17,2.17), st=[W], lu=[V], cl=["three directions at 90 degrees"], ta=["salty"], sys=["isometric"], fl=["yellow-orange"], co=["colorless or white","red or pink","blue","purple"], ha=["cubic","botryoidal or massive"], te=["brittle"], so=["dissolves readily"], tr=[TT,TL]),
 "Sylvite": m(H=(2,2.5), SG=(1.99,1.99), st=[W], lu=[V], cl=["three directions at 90 degrees"], ta=["bitter"], sys=["isometric"], fl=["violet"], co=["colorless or white","red or pink"], ha=["cubic","botryoidal or massive"], te=["brittle"], so=["dissolves readily"], tr=[TT,TL]),
 "Gypsum": m(H=(2,2), SG=(2.31,2.33), st=[W], lu=[V,"pearly","silky"], cl=["one perfect direction"], sys=["monoclinic"], fl=["yellow-orange","no distinctive color"], co=["colorless or white","gray or silver","brown","red or pink"], ha=["tabular or platy","fibrous or acicular","botryoidal or massive"], te=["flexible but not elastic"], tr=[TT,TL], w=(20,21.5)),
 "Barite": m(H=(3,3.5), SG=(4.3,4.6), st=[W], lu=[V,"pearly"], cl=["two directions"], sys=["orthorhombic"], fl=["green"], co=["colorless or white","yellow","brown","blue"], ha=["tabular or platy","botryoidal or massive"], te=["brittle"], tr=[TT,TL], uv=["bright fluorescence","no fluorescence"]),
 "Celestine": m(H=(3,3.5), SG=(3.95,3.97), st=[W], lu=[V,"pearly"], cl=["two directions"], sys=["orthorhombic"], fl=["crimson red"], co=["blue","colorless or white"], ha=["tabular or platy","prismatic or columnar"], te=["brittle"], tr=[TT,TL]),
 "Apatite": m(H=(5,5), SG=(3.16,3.22), st=[W], lu=[V,"resinous"], cl=["none (conchoidal or uneven fracture)"], sys=["hexagonal or trigonal"], fl=["crimson red","no distinctive color"], co=["green","blue","yellow","brown","purple"], ha=["prismatic or columnar","botryoidal or massive"], te=["brittle"], tr=[TT,TL], uv=["bright fluorescence","no fluorescence"], w=(0,1.8)),
 "Talc": m(H=(1,1), SG=(2.58,2.83), st=[W], lu=["pearly","greasy"], cl=["one perfect direction"], sys=["monoclinic","triclinic"], co=["colorless or white","green","gray or silver"], ha=["tabular or platy","botryoidal or massive"], te=["flexible but not elastic"], tr=[TL], fe=["soapy or greasy"], w=(4.5,5)),
 "Kaolinite": m(H=(2,2.5), SG=(2.6,2.63), st=[W], lu=["earthy"], cl=["one perfect direction"], sys=["triclinic"], co=["colorless or white","yellow","brown"], ha=["botryoidal or massive"], te=["flexible but not elastic","brittle"], tr=[OP,TL], od=["earthy clay smell"], w=(13.5,14.2)),
 "Muscovite": m(H=(2,2.5), SG=(2.77,2.88), st=[W], lu=[V,"pearly"], cl=["one perfect direction"], sys=["monoclinic"], fl=["violet","no distinctive color"], co=["colorless or white","gray or silver","brown","green"], ha=["tabular or platy"], te=["flexible and elastic"], tr=[TT,TL], w=(4,5)),
 "Biotite": m(H=(2.5,3), SG=(2.7,3.3), st=[W], lu=[V,"pearly","submetallic"], cl=["one perfect direction"], sys=["monoclinic"], fl=["violet","no distinctive color"], co=["black","brown"], ha=["tabular or platy"], te=["flexible and elastic"], tr=[TL,OP], chi=(1,3), w=(3,4.5)),
 "Chlorite": m(H=(2,2.5), SG=(2.6,3.3), st=["green",W], lu=[V,"pearly","earthy"], cl=["one perfect direction"], sys=["monoclinic"], co=["green"], ha=["tabular or platy","botryoidal or massive"], te=["flexible but not elastic"], tr=[TL,OP], chi=(0.3,1.5), w=(11,13)),
 "Serpentine": m(H=(2.5,5.5), SG=(2.5,2.6), st=[W], lu=["greasy","silky","resinous"], cl=["none (conchoidal or uneven fracture)","one perfect direction"], sys=["monoclinic"], co=["green","yellow","black","brown"], ha=["fibrous or acicular","botryoidal or massive"], te=["brittle","flexible but not elastic"], tr=[TL,OP], fe=["soapy or greasy","ordinary"], chi=(0.2,5), w=(12,13.5)),
 "Orthoclase": m(H=(6,6), SG=(2.55,2.63), st=[W], lu=[V,"pearly"], cl=["two directions"], sys=["monoclinic"], fl=["violet","no distinctive color"], co=["colorless or white","red or pink","yellow"], ha=["prismatic or columnar","tabular or platy","botryoidal or massive"], te=["brittle"], tr=[TT,TL]),
 "Albite": m(H=(6,6.5), SG=(2.6,2.65), st=[W], lu=[V,"pearly"], cl=["two directions"], sys=["triclinic"], fl=["yellow-orange"], co=["colorless or white","gray or silver","blue"], ha=["tabular or platy","botryoidal or massive"], te=["brittle"], tr=[TT,TL], sr=["twinning striations on cleavage","no striations"]),
 "Labradorite": m(H=(6,6.5), SG=(2.68,2.72), st=[W], lu=[V], cl=["two directions"], sys=["triclinic"], fl=["yellow-orange","no distinctive color"], co=["gray or silver","blue","black"], ha=["botryoidal or massive","tabular or platy"], te=["brittle"], tr=[TL,OP], sr=["twinning striations on cleavage"], op=["labradorescence","none"]),
 "Olivine": m(H=(6.5,7), SG=(3.27,3.37), st=[W], lu=[V], cl=["none (conchoidal or uneven fracture)"], sys=["orthorhombic"], co=["green","brown","yellow"], ha=["botryoidal or massive","prismatic or columnar"], te=["brittle"], tr=[TT,TL], chi=(0.5,2)),
 "Augite": m(H=(5.5,6), SG=(3.2,3.5), st=["greenish black",W], lu=[V,"submetallic"], cl=["two directions"], sys=["monoclinic"], co=["black","green","brown"], ha=["prismatic or columnar","botryoidal or massive"], te=["brittle"], tr=[TL,OP], chi=(0.5,2)),
 "Hornblende": m(H=(5,6), SG=(3.0,3.4), st=["greenish black",W], lu=[V], cl=["two directions"], sys=["monoclinic"], co=["black","green"], ha=["prismatic or columnar","fibrous or acicular"], te=["brittle"], tr=[TL,OP], chi=(0.5,2), w=(1.5,2.5)),
 "Almandine garnet": m(H=(7,7.5), SG=(4.1,4.3), st=[W], lu=[V,"resinous"], cl=["none (conchoidal or uneven fracture)"], sys=["isometric"], co=["red or pink","brown","black"], ha=["dodecahedral","botryoidal or massive"], te=["brittle"], tr=[TT,TL,OP], chi=(1,4)),
 "Tourmaline": m(H=(7,7.5), SG=(3.0,3.26), st=[W], lu=[V,"resinous"], cl=["none (conchoidal or uneven fracture)"], sys=["hexagonal or trigonal"], co=["black","green","red or pink","blue","brown"], ha=["prismatic or columnar"], te=["brittle"], tr=[TT,TL,OP], sr=["parallel striations on faces"], w=(3,4)),
 "Beryl": m(H=(7.5,8), SG=(2.63,2.92), st=[W], lu=[V], cl=["none (conchoidal or uneven fracture)"], sys=["hexagonal or trigonal"], co=["green","blue","yellow","red or pink","colorless or white"], ha=["prismatic or columnar"], te=["brittle"], tr=[TT,TL], sr=["parallel striations on faces","no striations"]),
 "Topaz": m(H=(8,8), SG=(3.49,3.57), st=[W], lu=[V], cl=["one perfect direction"], sys=["orthorhombic"], co=["colorless or white","yellow","brown","blue","red or pink"], ha=["prismatic or columnar"], te=["brittle"], tr=[TT,TL], sr=["parallel striations on faces","no striations"], w=(0,2)),
 "Corundum": m(H=(9,9), SG=(3.95,4.1), st=[W], lu=[V,"adamantine"], cl=["none (conchoidal or uneven fracture)"], sys=["hexagonal or trigonal"], co=["red or pink","blue","gray or silver","brown","yellow"], ha=["prismatic or columnar","tabular or platy"], te=["brittle"], tr=[TT,TL,OP], uv=["bright fluorescence","no fluorescence"]),
 "Diamond": m(H=(10,10), SG=(3.51,3.53), st=[W], lu=["adamantine"], cl=["four directions (octahedral)"], sys=["isometric"], co=["colorless or white","yellow","brown"], ha=["octahedral"], te=["brittle"], tr=[TT,TL], uv=["bright fluorescence","no fluorescence"]),
 "Graphite": m(H=(1,2), SG=(2.09,2.23), st=["black"], lu=["metallic","submetallic","earthy"], cl=["one perfect direction"], sys=["hexagonal or trigonal"], co=["black","gray or silver"], ha=["tabular or platy","botryoidal or massive"], te=["flexible but not elastic"], ec=["conducts"], tr=[OP], fe=["soapy or greasy"]),
 "Magnetite": m(H=(5.5,6.5), SG=(5.17,5.18), st=["black"], lu=["metallic","submetallic"], cl=["none (conchoidal or uneven fracture)"], mag=["strongly attracted"], sys=["isometric"], co=["black"], ha=["octahedral","botryoidal or massive"], te=["brittle"], ec=["conducts"], tr=[OP], chi=(1000,5700)),
 "Hematite": m(H=(5,6.5), SG=(5.0,5.3), st=["red-brown"], lu=["metallic","submetallic","earthy"], cl=["none (conchoidal or uneven fracture)"], mag=["weakly attracted","not attracted"], sys=["hexagonal or trigonal"], co=["gray or silver","black","red or pink","brown"], ha=["tabular or platy","botryoidal or massive"], te=["brittle"], ec=["conducts","does not conduct"], tr=[OP], chi=(0.5,40)),
 "Pyrite": m(H=(6,6.5), SG=(4.95,5.1), st=["greenish black","black"], lu=["metallic"], cl=["none (conchoidal or uneven fracture)"], sys=["isometric"], co=["brass or gold yellow"], ha=["cubic","octahedral","botryoidal or massive"], te=["brittle"], ec=["conducts"], tr=[OP], od=["sulfurous smell"], sr=["parallel striations on faces","no striations"]),
 "Pyrrhotite": m(H=(3.5,4.5), SG=(4.58,4.65), st=["gray to lead-gray","black"], lu=["metallic"], cl=["none (conchoidal or uneven fracture)"], mag=["strongly attracted","weakly attracted"], sys=["monoclinic","hexagonal or trigonal"], co=["brass or gold yellow","brown"], ha=["tabular or platy","botryoidal or massive"], te=["brittle"], ec=["conducts"], tr=[OP], od=["sulfurous smell"], chi=(50,3000)),
 "Chalcopyrite": m(H=(3.5,4), SG=(4.1,4.3), st=["greenish black"], lu=["metallic"], cl=["none (conchoidal or uneven fracture)"], sys=["tetragonal"], fl=["green","blue-green"], co=["brass or gold yellow"], ha=["botryoidal or massive"], te=["brittle"], ec=["conducts"], tr=[OP], od=["sulfurous smell"]),
 "Galena": m(H=(2.5,2.75), SG=(7.4,7.6), st=["gray to lead-gray"], lu=["metallic"], cl=["three directions at 90 degrees"], sys=["isometric"], fl=["blue-green","no distinctive color"], co=["gray or silver"], ha=["cubic","octahedral"], te=["brittle"], ec=["conducts"], tr=[OP], od=["sulfurous smell"]),
 "Sphalerite": m(H=(3.5,4), SG=(3.9,4.1), st=["yellow-brown",W], lu=["resinous","adamantine","submetallic"], cl=["six directions (dodecahedral)"], sys=["isometric"], co=["brown","black","yellow","red or pink"], ha=["dodecahedral","botryoidal or massive"], te=["brittle"], tr=[TT,TL,OP], od=["sulfurous smell"], uv=["bright fluorescence","no fluorescence"]),
 "Cinnabar": m(H=(2,2.5), SG=(8.0,8.2), st=["scarlet"], lu=["adamantine","submetallic","earthy"], cl=["three directions not at 90 degrees"], sys=["hexagonal or trigonal"], co=["red or pink"], ha=["rhombohedral","tabular or platy","botryoidal or massive"], te=["brittle","malleable and sectile"], tr=[TT,TL,OP], od=["sulfurous smell"]),
 "Arsenopyrite": m(H=(5.5,6), SG=(5.9,6.2), st=["black"], lu=["metallic"], cl=["two directions"], sys=["monoclinic"], co=["gray or silver"], ha=["prismatic or columnar","botryoidal or massive"], te=["brittle"], ec=["conducts"], tr=[OP], od=["garlic smell"], sr=["parallel striations on faces","no striations"]),
 "Malachite": m(H=(3.5,4), SG=(3.6,4.05), st=["green"], lu=["silky","adamantine","earthy"], cl=["one perfect direction","none (conchoidal or uneven fracture)"], hcl=["vigorous fizzing"], sys=["monoclinic"], fl=["green"], co=["green"], ha=["botryoidal or massive","fibrous or acicular"], te=["brittle"], tr=[TL,OP], w=(7.9,8.3)),
 "Azurite": m(H=(3.5,4), SG=(3.7,3.9), st=["blue"], lu=[V,"adamantine","earthy"], cl=["one perfect direction"], hcl=["vigorous fizzing"], sys=["monoclinic"], fl=["green"], co=["blue"], ha=["prismatic or columnar","tabular or platy","botryoidal or massive"], te=["brittle"], tr=[TT,TL,OP], w=(5,5.5)),
 "Native copper": m(H=(2.5,3), SG=(8.9,8.95), st=["copper-red"], lu=["metallic"], cl=["none (conchoidal or uneven fracture)"], sys=["isometric"], fl=["green"], co=["copper-red","brown","green"], ha=["dendritic or nuggets","botryoidal or massive"], te=["malleable and sectile"], ec=["conducts"], tr=[OP]),
 "Native gold": m(H=(2.5,3), SG=(15.5,19.3), st=["golden yellow"], lu=["metallic"], cl=["none (conchoidal or uneven fracture)"], sys=["isometric"], co=["brass or gold yellow"], ha=["dendritic or nuggets"], te=["malleable and sectile"], ec=["conducts"], tr=[OP]),
 "Native silver": m(H=(2.5,3), SG=(10.1,11.1), st=["silver-white"], lu=["metallic"], cl=["none (conchoidal or uneven fracture)"], sys=["isometric"], co=["gray or silver","black"], ha=["dendritic or nuggets","fibrous or acicular"], te=["malleable and sectile"], ec=["conducts"], tr=[OP]),
 "Native sulfur": m(H=(1.5,2.5), SG=(2.05,2.09), st=["yellow"], lu=["resinous","greasy"], cl=["none (conchoidal or uneven fracture)"], sys=["orthorhombic"], co=["yellow"], ha=["prismatic or columnar","botryoidal or massive","tabular or platy"], te=["brittle"], tr=[TT,TL], od=["sulfurous smell"]),
 "Uraninite": m(H=(5,6), SG=(6.5,10.9), st=["black","yellow-brown"], lu=["submetallic","greasy","earthy"], cl=["none (conchoidal or uneven fracture)"], sys=["isometric"], co=["black","brown"], ha=["cubic","octahedral","botryoidal or massive"], te=["brittle"], tr=[OP], rad=(10000,500000)),
 "Autunite": m(H=(2,2.5), SG=(3.1,3.2), st=["yellow"], lu=[V,"pearly"], cl=["one perfect direction"], uv=["bright fluorescence"], sys=["tetragonal"], co=["yellow","green"], ha=["tabular or platy"], te=["brittle"], tr=[TT,TL], rad=(5000,50000), w=(10,20)),
 "Scheelite": m(H=(4.5,5), SG=(5.9,6.1), st=[W], lu=[V,"adamantine"], cl=["four directions (octahedral)"], uv=["bright fluorescence"], sys=["tetragonal"], co=["colorless or white","yellow","brown"], ha=["octahedral","tabular or platy","botryoidal or massive"], te=["brittle"], tr=[TT,TL]),
}
def inter(a,b):
    (l1,h1),(l2,h2)=a,b
    if l1==h1: return l2<=l1<=h2
    return l1<h2 and h1>l2
truths=list(M)
out=["# An original kumo-gen domain (not from KUMO): identifying a hand specimen",
     "# of a common mineral with the tests of a geology teaching lab. Properties",
     "# follow standard mineralogy references; a state rules out every mineral",
     "# that could not show it.",
     "name: mineral-lab", "title: Mineral identification lab", "truth_noun: mineral", "truth_plural: minerals",
     "action_noun: lab test", "action_plural: lab tests", "goal: identify the mineral of a hand specimen", "truths:"]
import json, os
q=lambda s: json.dumps(s, ensure_ascii=False)
out += [f"- {q(t)}" for t in truths]
out.append("actions:")
key={v:k for k,v in A.items()}
for act in ORDER:
    k=key[act]
    if act in N:
        typ,unit,states=N[act]
        out += [f"- name: {q(act)}", f"  type: {typ}", f"  unit: {q(unit)}", "  states:"]
        for (lo,hi) in states:
            ro=[t for t in truths if not inter(M[t].get(k, DEFAULT.get(act)), (lo,hi))]
            fmt=(lambda x: str(int(x))) if typ=="int" else (lambda x: repr(float(x)))
            out.append(f"  - range: [{fmt(lo)}, {fmt(hi)}]")
            out.append(f"    rules_out: [{', '.join(q(t) for t in ro)}]")
    else:
        out += [f"- name: {q(act)}", "  type: str", "  states:"]
        for s in S[act]:
            for t in truths:
                v=M[t].get(k, [DEFAULT[act]] if act in DEFAULT else None)
                assert v is not None, (t, act)
                for x in v: assert x in S[act], (t, act, x)
            ro=[t for t in truths if s not in M[t].get(k, [DEFAULT.get(act)])]
            out.append(f"    {q(s)}: [{', '.join(q(t) for t in ro)}]")
open(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'domains', 'mineral-lab.yaml'), 'w', encoding='utf-8').write("\n".join(out)+"\n")
print(len(truths), len(ORDER))
# sanity: every mineral distinguishable
sig={}
for t in truths:
    s=[]
    for act in ORDER:
        k=key[act]; s.append(str(M[t].get(k, DEFAULT.get(act))))
    sig.setdefault(tuple(s),[]).append(t)
print([v for v in sig.values() if len(v)>1])
