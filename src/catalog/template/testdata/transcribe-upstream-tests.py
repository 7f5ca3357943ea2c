# Transcribes upstream's semver template unit tests (channel linking and generation cases) into the
# JSON fixtures beside this script. Run from this directory:
#   python3 transcribe-upstream-tests.py /work/.mirror/operator-framework+operator-registry/repo
import re, json, sys, subprocess

REPO = sys.argv[1]
def git_show(ref):
    return subprocess.run(['git', '-C', REPO, 'show', ref], check=True, capture_output=True, text=True).stdout


def channels_in(text):
    out = []
    for m in re.finditer(r'\{\s*Schema:\s*"olm.channel",\s*Name:\s*"([^"]+)",\s*Package:\s*"a",\s*Entries:\s*\[\]declcfg.ChannelEntry\{(.*?)\n\s*\},\s*\n\s*\}', text, re.S):
        entries = []
        for e in re.finditer(r'\{Name: "([^"]+)"(?:, Replaces: "([^"]*)")?(?:, Skips: \[\]string\{([^}]*)\})?\}', m.group(2)):
            ent = {"name": e.group(1)}
            if e.group(2): ent["replaces"] = e.group(2)
            if e.group(3) is not None:
                sk = re.findall(r'"([^"]+)"', e.group(3))
                if sk: ent["skips"] = sk
            entries.append(ent)
        out.append({"schema": "olm.channel", "name": m.group(1), "package": "a", "entries": entries})
    return out

def unlinked_in(text):
    out = {}
    for m in re.finditer(r'"([^"]+)":\s*\{\s*Schema:\s*"olm.channel",\s*Name:\s*"[^"]+",\s*Package:\s*"a",\s*Entries:\s*\[\]declcfg.ChannelEntry\{(.*?)\n\s*\},', text, re.S):
        out[m.group(1)] = re.findall(r'\{Name: "([^"]+)"\}', m.group(2))
    return out

def tuples_in(text):
    arch = {"stableChannelArchetype": "stable", "candidateChannelArchetype": "candidate", "fastChannelArchetype": "fast"}
    kind = {"MajorStreamType": "major", "MinorStreamType": "minor"}
    return [{"arch": arch[a], "kind": kind[k], "name": n, "parent": p, "index": int(i), "version": v}
            for a, k, n, p, i, v in re.findall(r'\{arch: (\w+), kind: (\w+), name: "([^"]+)", parent: "([^"]+)", index: (\d+), version: semver.MustParse\("([^"]+)"\)\}', text)]

def block(text, start, end):
    i = text.index(start); j = text.index(end, i)
    return text[i:j]

def versions_in(text):
    return {n: v for n, v in re.findall(r'"([^"]+)":\s*semver.MustParse\(\(?"([^"]+)"\)?\)', text)}

src = git_show('HEAD:alpha/template/semver/semver_test.go')
link = block(src, 'func TestLinkChannels', 'func TestGenerateChannels')
tup = {name: tuples_in(block(link, name + ' := ', '}\n\n')) for name in ['minimumChannelEntries', 'majorChannelEntries', 'majorChannelEntriesLastXChange', 'majorChannelEntriesLastArchChange']}
unl = {name: unlinked_in(block(link, name + ' := ', '\n\t}\n')) for name in ['majorGeneratedUnlinkedChannels', 'majorGeneratedUnlinkedChannelsLastXChange', 'majorGeneratedUnlinkedChannelsLastArchChange', 'minimumGeneratedUnlinkedChannels']}
cases = []
for m in re.finditer(r'name:\s*"([^"]+)",\s*unlinkedChannels:\s*(\w+),\s*channelEntries:\s*(\w+),\s*generateMinorChannels:\s*(\w+),\s*generateMajorChannels:\s*(\w+),\s*out:\s*\[\]declcfg.Channel\{(.*?)\n\t\t\t\},\n\t\t\},', link, re.S):
    cases.append({"name": m.group(1), "generateMinorChannels": m.group(4) == 'true', "generateMajorChannels": m.group(5) == 'true',
                  "unlinked": unl[m.group(2)], "entries": tup[m.group(3)], "out": channels_in(m.group(6))})
assert len(cases) == 4, len(cases)
json.dump({"source": "operator-registry HEAD alpha/template/semver/semver_test.go TestLinkChannels", "cases": cases}, open('current/link-channels.json', 'w'), indent=1)

gen = block(src, 'func TestGenerateChannels', 'func TestGetVersionsFromStandardChannel')
versions = versions_in(block(gen, 'channelOperatorVersions := ', '\n\t}\n'))
major = channels_in(block(gen, 'majorLinkedChannels := ', '\n\t}\n'))
minor = channels_in(block(gen, 'minorLinkedChannels := ', '\n\t}\n'))
gcases = []
for m in re.finditer(r'name:\s*"([^"]+)",\s*generateMinorChannels:\s*(\w+),\s*generateMajorChannels:\s*(\w+),\s*defaultChannel:\s*"([^"]+)",\s*channelTypePreference:\s*(\w+),\s*out:\s*(\w+),', gen):
    gcases.append({"name": m.group(1), "generateMinorChannels": m.group(2) == 'true', "generateMajorChannels": m.group(3) == 'true',
                   "defaultChannel": m.group(4), "channelTypePreference": {"MinorStreamType": "minor", "MajorStreamType": "major"}[m.group(5)],
                   "out": {"minorLinkedChannels": "minor", "majorLinkedChannels": "major", "combinedLinkedChannels": "combined"}[m.group(6)]})
assert len(gcases) == 6
print(len(major), len(minor))
json.dump({"source": "operator-registry HEAD alpha/template/semver/semver_test.go TestGenerateChannels",
           "versions": {"stable": versions}, "majorLinkedChannels": major, "minorLinkedChannels": minor,
           "combinedLinkedChannels": "minorLinkedChannels + majorLinkedChannels, sorted by name", "cases": gcases}, open('current/generate-channels.json', 'w'), indent=1)

# legacy v1.26.3
src = git_show('v1.26.3:alpha/veneer/semver/semver_test.go')
link = block(src, 'func TestLinkChannels', 'func TestGenerateChannels')
versions = versions_in(block(link, 'channelOperatorVersions := ', '\n\t}\n'))
unl = {name: unlinked_in(block(link, name + ' := ', '\n\t}\n')) for name in ['majorGeneratedUnlinkedChannels', 'minorGeneratedUnlinkedChannels']}
lcases = []
for m in re.finditer(r'name:\s*"([^"]+)",\s*unlinkedChannels:\s*(\w+),\s*avoidSkipPatch:\s*(\w+),\s*generateMinorChannels:\s*(\w+),\s*generateMajorChannels:\s*(\w+),\s*out:\s*\[\]declcfg.Channel\{(.*?)\n\t\t\t\},\n\t\t\},', link, re.S):
    lcases.append({"name": m.group(1), "avoidSkipPatch": m.group(3) == 'true', "generateMinorChannels": m.group(4) == 'true', "generateMajorChannels": m.group(5) == 'true',
                   "unlinked": unl[m.group(2)], "out": channels_in(m.group(6))})
assert len(lcases) == 4, len(lcases)
json.dump({"source": "operator-registry v1.26.3 alpha/veneer/semver/semver_test.go TestLinkChannels", "versions": {"stable": versions}, "cases": lcases}, open('legacy/link-channels.json', 'w'), indent=1)
gen = block(src, 'func TestGenerateChannels', 'func TestGetVersionsFromStandardChannel')
versions = versions_in(block(gen, 'channelOperatorVersions := ', '\n\t}\n'))
gcases = []
for m in re.finditer(r'name:\s*"([^"]+)",\s*avoidSkipPatch:\s*(\w+),\s*generateMinorChannels:\s*(\w+),\s*generateMajorChannels:\s*(\w+),\s*out:\s*\[\]declcfg.Channel\{(.*?)\n\t\t\t\},\n\t\t\},', gen, re.S):
    gcases.append({"name": m.group(1), "avoidSkipPatch": m.group(2) == 'true', "generateMinorChannels": m.group(3) == 'true', "generateMajorChannels": m.group(4) == 'true', "out": channels_in(m.group(5))})
assert len(gcases) == 1
json.dump({"source": "operator-registry v1.26.3 alpha/veneer/semver/semver_test.go TestGenerateChannels", "versions": {"stable": versions}, "cases": gcases}, open('legacy/generate-channels.json', 'w'), indent=1)
