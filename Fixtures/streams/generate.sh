#!/usr/bin/env bash
# Regenerates the HLS test streams in this folder (see README.md).
#
# Usage: Fixtures/streams/generate.sh            # writes next to this script
#        OUT_DIR=/tmp/x Fixtures/streams/generate.sh
#        VCODEC=mpeg4 Fixtures/streams/generate.sh   # force the non-x264 fallback
#
# Idempotent: every stream folder is deleted and recreated. Output is
# deterministic for a given ffmpeg/libx264 build (bitexact flags, no metadata,
# synthetic lavfi sources, single-threaded encoders, fixed AES key and IV).
set -euo pipefail

FFMPEG=${FFMPEG:-ffmpeg}
FFPROBE=${FFPROBE:-ffprobe}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OUT=${OUT_DIR:-$HERE}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

FPS=10
SEG=2                    # segment length, seconds
GOP=$((FPS * SEG))       # one keyframe per segment, at its start
AR=48000                 # audio sample rate

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# --- encoder choice -----------------------------------------------------------
encoders=$("$FFMPEG" -hide_banner -encoders 2>/dev/null || true)
VCODEC=${VCODEC:-}
if [[ -z $VCODEC ]]; then
  if grep -q ' libx264 ' <<<"$encoders"; then VCODEC=libx264; else VCODEC=mpeg4; fi
fi
case $VCODEC in
  libx264)
    # -threads 1: x264's sliced threads (zerolatency) make the bitstream depend
    # on the thread count, i.e. on the machine.
    VENC=(-c:v libx264 -preset ultrafast -tune zerolatency -profile:v baseline
          -threads 1 -sc_threshold 0) ;;
  mpeg4|mpeg2video)
    # dump_extra: repeat the VOL/sequence header (extradata) in every keyframe,
    # otherwise the TS segments are undecodable (0x0 picture size).
    VENC=(-c:v "$VCODEC" -bf 0 -threads 1 -bsf:v dump_extra=freq=keyframe) ;;
  *) echo "unsupported VCODEC=$VCODEC" >&2; exit 1 ;;
esac
VENC+=(-pix_fmt yuv420p -g "$GOP" -keyint_min "$GOP"
       -force_key_frames "expr:gte(t,n_forced*$SEG)" -flags:v +bitexact)
AENC=(-c:a aac -ac 1 -ar "$AR" -flags:a +bitexact)
# Output-side determinism: no encoder/creation-time tags, no metadata.
BITEXACT=(-map_metadata -1 -fflags +bitexact)
# Common HLS muxer options: VOD playlists listing every segment.
HLS=(-f hls -hls_time "$SEG" -hls_list_size 0 -hls_playlist_type vod)

ff() { "$FFMPEG" -hide_banner -nostdin -loglevel error -y "$@"; }

# Synthetic sources. testsrc2 draws a moving pattern plus a running clock;
# sine with beep_factor beeps once per second (handy for A/V sync checks).
video_src() { # WxH SECONDS
  echo "testsrc2=size=$1:rate=$FPS:duration=$2"
}
audio_src() { # FREQ SECONDS
  echo "sine=frequency=$1:beep_factor=4:sample_rate=$AR:duration=$2"
}

fresh() { # DIR: delete and recreate a stream folder
  rm -rf "${OUT:?}/$1"
  mkdir -p "$OUT/$1"
}

# "PEAK AVERAGE" bit rates (bit/s) of a media playlist's segments, computed
# from the segment files' sizes and EXTINF durations (HLS BANDWIDTH is the
# peak segment bit rate, AVERAGE-BANDWIDTH the average).
playlist_rates() { # PLAYLIST
  local pl=$1 dir dur=1 line
  dir=$(dirname "$pl")
  while IFS= read -r line; do
    case $line in
      '#EXTINF:'*) dur=${line#'#EXTINF:'}; dur=${dur%%,*} ;;
      '#'* | '') ;;
      *) echo "$(wc -c <"$dir/$line") $dur" ;;
    esac
  done <"$pl" | awk '
    { b = $1 * 8; r = b / $2; if (r > p) p = r; tb += b; td += $2 }
    END { pi = int(p); if (p > pi) pi++; printf "%d %d\n", pi, int(tb / td + 0.5) }'
}

# CODECS="..." attribute from the Nth (1-based) EXT-X-STREAM-INF of the
# master playlist ffmpeg wrote (empty if ffmpeg could not tell, e.g. mpeg4).
ffmpeg_codecs() { # MASTER N
  grep '^#EXT-X-STREAM-INF:' "$1" | sed -n "$2p" | grep -o 'CODECS="[^"]*"' || true
}

# --- 1. ts-multivariant ---------------------------------------------------------
# Two variants (160x90 and 96x54), each a VOD media playlist of muxed A/V TS.
gen_ts_multivariant() {
  local d=ts-multivariant
  fresh $d
  (cd "$OUT/$d" && ff \
    -f lavfi -i "$(video_src 160x90 6)" \
    -f lavfi -i "$(video_src 96x54 6)" \
    -f lavfi -i "$(audio_src 440 6)" \
    -map 0:v -map 1:v -map 2:a -map 2:a \
    "${VENC[@]}" -b:v:0 80k -maxrate:v:0 80k -bufsize:v:0 160k \
                 -b:v:1 40k -maxrate:v:1 40k -bufsize:v:1 80k \
    "${AENC[@]}" -b:a:0 32k -b:a:1 24k \
    "${BITEXACT[@]}" "${HLS[@]}" -hls_flags independent_segments \
    -var_stream_map "v:0,a:0,name:hi v:1,a:1,name:lo" \
    -master_pl_name ffmpeg-master.m3u8 \
    -hls_segment_filename '%v/seg%d.ts' '%v/index.m3u8')
  local m="$OUT/$d/ffmpeg-master.m3u8" c1 c2 hi_peak hi_avg lo_peak lo_avg
  c1=$(ffmpeg_codecs "$m" 1); c2=$(ffmpeg_codecs "$m" 2)
  rm -f "$m"
  read -r hi_peak hi_avg < <(playlist_rates "$OUT/$d/hi/index.m3u8")
  read -r lo_peak lo_avg < <(playlist_rates "$OUT/$d/lo/index.m3u8")
  cat >"$OUT/$d/master.m3u8" <<EOF
#EXTM3U
#EXT-X-VERSION:3
#EXT-X-INDEPENDENT-SEGMENTS
#EXT-X-STREAM-INF:BANDWIDTH=$hi_peak,AVERAGE-BANDWIDTH=$hi_avg,RESOLUTION=160x90,FRAME-RATE=$FPS.000${c1:+,$c1}
hi/index.m3u8
#EXT-X-STREAM-INF:BANDWIDTH=$lo_peak,AVERAGE-BANDWIDTH=$lo_avg,RESOLUTION=96x54,FRAME-RATE=$FPS.000${c2:+,$c2}
lo/index.m3u8
EOF
}

# --- 2. fmp4 --------------------------------------------------------------------
gen_fmp4() {
  local d=fmp4
  fresh $d
  (cd "$OUT/$d" && ff \
    -f lavfi -i "$(video_src 160x90 6)" -f lavfi -i "$(audio_src 523.25 6)" \
    -map 0:v -map 1:a \
    "${VENC[@]}" -b:v 80k -maxrate 80k -bufsize 160k "${AENC[@]}" -b:a 32k \
    "${BITEXACT[@]}" "${HLS[@]}" -hls_flags independent_segments \
    -hls_segment_type fmp4 -hls_fmp4_init_filename init.mp4 \
    -hls_segment_filename 'seg%d.m4s' index.m3u8)
}

# --- 3. byterange -----------------------------------------------------------------
gen_byterange() {
  local d=byterange
  fresh $d
  (cd "$OUT/$d" && ff \
    -f lavfi -i "$(video_src 160x90 6)" -f lavfi -i "$(audio_src 659.25 6)" \
    -map 0:v -map 1:a \
    "${VENC[@]}" -b:v 80k -maxrate 80k -bufsize 160k "${AENC[@]}" -b:a 32k \
    "${BITEXACT[@]}" "${HLS[@]}" -hls_flags single_file+independent_segments \
    -hls_segment_filename media.ts index.m3u8)
}

# --- 4. aes128 --------------------------------------------------------------------
# Test key: the 16 ASCII bytes "hlscache-testkey"; fixed IV. Not a secret.
AES_KEY_ASCII=hlscache-testkey
AES_IV_HEX=000102030405060708090a0b0c0d0e0f
gen_aes128() {
  local d=aes128
  fresh $d
  printf '%s' "$AES_KEY_ASCII" >"$OUT/$d/enc.key"
  [[ $(wc -c <"$OUT/$d/enc.key") -eq 16 ]]
  # key info file: key URI written into the playlist, key file path, IV.
  printf '%s\n%s\n%s\n' enc.key "$OUT/$d/enc.key" "$AES_IV_HEX" >"$TMP/aes128.keyinfo"
  (cd "$OUT/$d" && ff \
    -f lavfi -i "$(video_src 160x90 6)" -f lavfi -i "$(audio_src 783.99 6)" \
    -map 0:v -map 1:a \
    "${VENC[@]}" -b:v 80k -maxrate 80k -bufsize 160k "${AENC[@]}" -b:a 32k \
    "${BITEXACT[@]}" "${HLS[@]}" -hls_flags independent_segments \
    -hls_key_info_file "$TMP/aes128.keyinfo" \
    -hls_segment_filename 'seg%d.ts' index.m3u8)
}

# --- 5. alt-audio -----------------------------------------------------------------
# Video-only variant + audio-only rendition in group "aud".
gen_alt_audio() {
  local d=alt-audio
  fresh $d
  mkdir -p "$OUT/$d/video" "$OUT/$d/audio"
  # Two separate ffmpeg runs rather than one with -var_stream_map
  # "v:0,agroup:aud a:0,agroup:aud": ffmpeg 5.1 then drops the audio-only
  # variant's last AAC packet, warns "frame size not set", and names the group
  # "group_aud". The master is written by hand below.
  # In a muxed A/V file ffmpeg delays everything by the AAC encoder's
  # 1024-sample priming; delay the video-only variant by the same amount so
  # both playlists share the timeline of the other streams (video at 1.421333 s,
  # audio at 1.4 s).
  local priming
  priming=$(awk -v ar="$AR" 'BEGIN { printf "%.6f", 1024 / ar }')
  (cd "$OUT/$d/video" && ff \
    -f lavfi -i "$(video_src 160x90 6)" -map 0:v \
    "${VENC[@]}" -b:v 80k -maxrate 80k -bufsize 160k -output_ts_offset "$priming" \
    "${BITEXACT[@]}" "${HLS[@]}" -hls_flags independent_segments \
    -master_pl_name ffmpeg-master.m3u8 \
    -hls_segment_filename 'seg%d.ts' index.m3u8)
  # Audio is cut to 281 AAC frames' worth of samples (5.9947 s): with the
  # encoder's priming frame that is 282 packets = exactly 3 segments of 94
  # frames (2.005333 s each). A full 6 s would leave a 4th, 21 ms segment.
  local asamples=$(( (3 * (SEG * AR / 1024 + 1) - 1) * 1024 ))
  (cd "$OUT/$d/audio" && ff \
    -f lavfi -i "$(audio_src 440 7)" -map 0:a -af "atrim=end_sample=$asamples" \
    "${AENC[@]}" -b:a 32k \
    "${BITEXACT[@]}" "${HLS[@]}" -hls_flags independent_segments \
    -hls_segment_filename 'seg%d.ts' index.m3u8)
  local m="$OUT/$d/video/ffmpeg-master.m3u8" vc codecs="" v_peak v_avg a_peak a_avg
  vc=$(ffmpeg_codecs "$m" 1)
  rm -f "$m"
  # The variant's CODECS lists the audio group's codec too (AAC-LC).
  if [[ -n $vc ]]; then codecs=",${vc%\"},mp4a.40.2\""; fi
  read -r v_peak v_avg < <(playlist_rates "$OUT/$d/video/index.m3u8")
  read -r a_peak a_avg < <(playlist_rates "$OUT/$d/audio/index.m3u8")
  cat >"$OUT/$d/master.m3u8" <<EOF
#EXTM3U
#EXT-X-VERSION:3
#EXT-X-INDEPENDENT-SEGMENTS
#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aud",NAME="English",LANGUAGE="en",DEFAULT=YES,AUTOSELECT=YES,CHANNELS="1",URI="audio/index.m3u8"
#EXT-X-STREAM-INF:BANDWIDTH=$((v_peak + a_peak)),AVERAGE-BANDWIDTH=$((v_avg + a_avg)),RESOLUTION=160x90,FRAME-RATE=$FPS.000$codecs,AUDIO="aud"
video/index.m3u8
EOF
}

# --- 6. live-source ---------------------------------------------------------------
# 20 x 2 s muxed TS segments with continuous timestamps (and continuity
# counters); a test origin serves a sliding live window over them.
LIVE_SEGMENTS=20
gen_live_source() {
  local d=live-source secs=$((LIVE_SEGMENTS * SEG))
  fresh $d
  (cd "$OUT/$d" && ff \
    -f lavfi -i "$(video_src 160x90 $secs)" -f lavfi -i "$(audio_src 440 $secs)" \
    -map 0:v -map 1:a \
    "${VENC[@]}" -b:v 60k -maxrate 60k -bufsize 120k "${AENC[@]}" -b:a 24k \
    "${BITEXACT[@]}" "${HLS[@]}" -hls_flags independent_segments \
    -hls_segment_filename 'seg%d.ts' vod.m3u8)
  local n
  n=$(find "$OUT/$d" -maxdepth 1 -name 'seg*.ts' | wc -l)
  if [[ $n -ne $LIVE_SEGMENTS ]]; then
    echo "live-source: expected $LIVE_SEGMENTS segments, got $n" >&2; exit 1
  fi
  if grep '^#EXTINF:' "$OUT/$d/vod.m3u8" | grep -qv "^#EXTINF:$SEG.000000,\$"; then
    echo "live-source: a segment is not exactly $SEG s" >&2; exit 1
  fi
  local v0 a0
  v0=$("$FFPROBE" -v error -select_streams v:0 -show_entries packet=pts \
        -read_intervals '%+#1' -of default=nw=1:nk=1 "$OUT/$d/seg0.ts" | head -1)
  a0=$("$FFPROBE" -v error -select_streams a:0 -show_entries packet=pts \
        -read_intervals '%+#1' -of default=nw=1:nk=1 "$OUT/$d/seg0.ts" | head -1)
  cat >"$OUT/$d/README" <<EOF
seg0.ts..seg$((LIVE_SEGMENTS - 1)).ts: each exactly $SEG.000 s ($GOP frames at $FPS fps, starting with a keyframe), $VCODEC video + AAC audio muxed in MPEG-TS, continuous timestamps; segment N starts at N*$SEG s, i.e. its first video PTS is $v0 + N*$((SEG * 90000)) (90 kHz; first audio PTS of seg0 is $a0). vod.m3u8 lists all $LIVE_SEGMENTS. Made by ../generate.sh.
EOF
}

gen_ts_multivariant
gen_fmp4
gen_byterange
gen_aes128
gen_alt_audio
gen_live_source

# nginx workers (and other test servers) may run as an unprivileged user.
chmod -R a+rX "$OUT"
echo "generated streams in $OUT (video encoder: $VCODEC)"
