#!/usr/bin/env bash
# Regenerates the DASH test streams in this folder: 6 s of the same synthetic video and audio as the HLS
# streams (generate.sh), 2 s segments, packaged three ways by ffmpeg's dash muxer:
#   dash-timeline/  SegmentTemplate with SegmentTimeline ($Time$-free, $Number$ addressing)
#   dash-number/    SegmentTemplate with @duration and $Number$ (-use_timeline 0)
#   dash-list/      SegmentList with SegmentURLs (-use_template 0)
#   dash-ranges/    SegmentList of byte ranges of one file per Representation, under a Representation BaseURL
#                   (-single_file 1)
# and by ffmpeg's mp4 muxer with a global sidx, described by hand (GPAC's MP4Box is not in Debian 12):
#   dash-ondemand/  the onDemand profile: SegmentBase with @indexRange and Initialization@range, one file per
#                   Representation, played entirely by Range requests
#
# Usage: Fixtures/streams/generate-dash.sh   (OUT_DIR=/tmp/x to write elsewhere)
set -euo pipefail

FFMPEG=${FFMPEG:-ffmpeg}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OUT=${OUT_DIR:-$HERE}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

ff() { "$FFMPEG" -hide_banner -nostdin -loglevel error -y "$@"; }

# One source file, encoded once: every package holds the same frames.
ff -f lavfi -i "testsrc2=size=320x180:rate=10:duration=6" -f lavfi -i "sine=frequency=440:beep_factor=4:duration=6" \
    -c:v libx264 -preset ultrafast -profile:v baseline -threads 1 -pix_fmt yuv420p -g 20 -keyint_min 20 \
    -sc_threshold 0 -flags:v +bitexact -c:a aac -ac 1 -ar 48000 -flags:a +bitexact \
    -map_metadata -1 -fflags +bitexact "$TMP/source.mp4"

package() { # NAME OPTIONS...
  local name=$1
  shift
  rm -rf "${OUT:?}/$name"
  mkdir -p "$OUT/$name"
  ff -i "$TMP/source.mp4" -map 0:v -map 0:a -c copy -f dash -seg_duration 2 -use_timeline 1 -use_template 1 \
      -init_seg_name 'init-$RepresentationID$.m4s' -media_seg_name 'chunk-$RepresentationID$-$Number%05d$.m4s' \
      "$@" "$OUT/$name/manifest.mpd"
}

package dash-timeline
package dash-number -use_timeline 0
package dash-list -use_template 0 -use_timeline 0

package dash-ranges -use_template 0 -use_timeline 0 -single_file 1

# onDemand: fragmented MP4 with one global sidx; the MPD's ranges are read from the box layout.
rm -rf "${OUT:?}/dash-ondemand"
mkdir -p "$OUT/dash-ondemand"
ff -i "$TMP/source.mp4" -map 0:v -c copy -movflags frag_keyframe+empty_moov+global_sidx+default_base_moof \
    "$OUT/dash-ondemand/video.mp4"
ff -i "$TMP/source.mp4" -map 0:a -c copy -movflags frag_keyframe+empty_moov+global_sidx+default_base_moof \
    -frag_duration 2000000 "$OUT/dash-ondemand/audio.mp4"
python3 - "$OUT/dash-ondemand" <<'PY'
import struct, sys
folder = sys.argv[1]
def ranges(name):
    data = open(f"{folder}/{name}", "rb").read()
    offset, boxes = 0, {}
    while offset < len(data):
        size, kind = struct.unpack(">I4s", data[offset:offset + 8])
        boxes.setdefault(kind.decode(), (offset, offset + size - 1))
        offset += size
    return boxes["moov"][1], boxes["sidx"]
video_init, (video_sidx_start, video_sidx_end) = ranges("video.mp4")
audio_init, (audio_sidx_start, audio_sidx_end) = ranges("audio.mp4")
open(f"{folder}/manifest.mpd", "w").write(f"""<?xml version="1.0" encoding="UTF-8"?>
<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" profiles="urn:mpeg:dash:profile:isoff-on-demand:2011" type="static"
     mediaPresentationDuration="PT6.0S" minBufferTime="PT2.0S">
  <Period id="0">
    <AdaptationSet id="0" contentType="video" mimeType="video/mp4" segmentAlignment="true" startWithSAP="1">
      <Representation id="video" codecs="avc1.42c00b" bandwidth="324809" width="320" height="180">
        <BaseURL>video.mp4</BaseURL>
        <SegmentBase indexRange="{video_sidx_start}-{video_sidx_end}">
          <Initialization range="0-{video_init}"/>
        </SegmentBase>
      </Representation>
    </AdaptationSet>
    <AdaptationSet id="1" contentType="audio" mimeType="audio/mp4" segmentAlignment="true" startWithSAP="1">
      <Representation id="audio" codecs="mp4a.40.2" bandwidth="69387" audioSamplingRate="48000">
        <BaseURL>audio.mp4</BaseURL>
        <SegmentBase indexRange="{audio_sidx_start}-{audio_sidx_end}">
          <Initialization range="0-{audio_init}"/>
        </SegmentBase>
      </Representation>
    </AdaptationSet>
  </Period>
</MPD>
""")
PY
