#!/usr/bin/env bash
# Regenerates the DASH test streams in this folder: 6 s of the same synthetic video and audio as the HLS
# streams (generate.sh), 2 s segments, packaged three ways by ffmpeg's dash muxer:
#   dash-timeline/  SegmentTemplate with SegmentTimeline ($Time$-free, $Number$ addressing)
#   dash-number/    SegmentTemplate with @duration and $Number$ (-use_timeline 0)
#   dash-list/      SegmentList with SegmentURLs (-use_template 0)
# and, when GPAC's MP4Box is installed, by MP4Box's onDemand profile:
#   dash-ondemand/  SegmentBase with @indexRange (one file per Representation, fetched by byte ranges)
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

if command -v MP4Box >/dev/null; then
  rm -rf "$OUT/dash-ondemand"
  mkdir -p "$OUT/dash-ondemand"
  (cd "$TMP" && MP4Box -quiet -dash 2000 -profile onDemand -out "$OUT/dash-ondemand/manifest.mpd" \
      source.mp4#video source.mp4#audio)
fi
