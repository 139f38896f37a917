# Shared by tools/install-ptxas and tools/install-nvrtc (sourced, not run): fetching a pinned
# wheel from PyPI into .tools/ and extracting one member of it. Needs pip (or python3 -m pip)
# only when the wheel is not there yet; unzip, or python3's zipfile, to extract.

# The pip command: pip3, pip, or python3 -m pip.
wheel_pip() {
    local candidate
    for candidate in pip3 pip; do
        if command -v "$candidate" >/dev/null 2>&1; then
            echo "$candidate"
            return
        fi
    done
    if command -v python3 >/dev/null 2>&1; then
        echo "python3 -m pip"
        return
    fi
    echo "wheel.sh: need pip or python3 to download a wheel" >&2
    return 1
}

# fetch_wheel DIST VERSION DIR: prints the path of DIST==VERSION's manylinux x86-64 wheel in
# DIR, downloading it first when it is not there.
fetch_wheel() {
    local dist=$1 version=$2 dir=$3 file pip
    file=${dist//-/_}
    shopt -s nullglob
    local wheels=("$dir"/"$file"-"$version"-*.whl)
    if [[ ${#wheels[@]} -eq 0 ]]; then
        echo "fetching $dist==$version into $dir" >&2
        pip=$(wheel_pip) || return 1
        $pip download --quiet --no-deps --only-binary=:all: \
            --platform manylinux2014_x86_64 --python-version 3 \
            -d "$dir" "$dist==$version" >&2
        wheels=("$dir"/"$file"-"$version"-*.whl)
    fi
    shopt -u nullglob
    if [[ ${#wheels[@]} -eq 0 ]]; then
        echo "wheel.sh: no $dist==$version wheel in $dir after the download" >&2
        return 1
    fi
    echo "${wheels[0]}"
}

# extract_member WHEEL MEMBER DEST: writes the wheel's file MEMBER to the path DEST.
extract_member() {
    local tmp
    tmp=$(mktemp -d "$(dirname "$3")/extract.XXXXXX")
    if command -v unzip >/dev/null 2>&1; then
        unzip -q -o "$1" "$2" -d "$tmp"
    else
        python3 - "$1" "$2" "$tmp" <<'PY'
import sys, zipfile
zipfile.ZipFile(sys.argv[1]).extract(sys.argv[2], sys.argv[3])
PY
    fi
    mv -f "$tmp/$2" "$3"
    rm -rf "$tmp"
}
