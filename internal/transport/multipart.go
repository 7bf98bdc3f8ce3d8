package transport

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"os"
	"strconv"
	"strings"

	"github.com/99designs/gqlgen/graphql"

	"github.com/advisorhq/gateway/internal/apperr"
	"github.com/advisorhq/gateway/internal/bytesize"
	"github.com/advisorhq/gateway/internal/diskbudget"
)

// uploads is the transport of the GraphQL multipart request specification: an "operations"
// part, a "map" part naming which variable each file fills, then the files. gqlgen has one,
// but it answers an oversized request with 200 or 422, has no limit on the number of files,
// and reads small files into memory; this one answers 413, bounds the files, and spills every
// file to a temporary file, within a disk budget shared by all requests, that is removed when
// the request ends.
type uploads struct {
	maxBytes int64 // the whole request
	maxFiles int
	disk     *diskbudget.Budget // shared with the bulk loads' copies when the server wires one
}

// maxOperationsBytes bounds the operations and map parts, which are read into memory.
const maxOperationsBytes = 2 << 20

// maxPathsPerFile bounds the variables one file may fill. The specification lets a file fill
// several; without a bound, one small file mapped to thousands of paths costs a reader and a
// variable each.
const maxPathsPerFile = 100

// overBudgetRetry is the Retry-After of an upload refused for the disk budget: uploads in
// flight give their share back when they end, which is seconds for most.
const overBudgetRetry = "5"

var _ graphql.Transport = uploads{}

func (u uploads) Supports(r *http.Request) bool {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && r.Method == http.MethodPost && mt == "multipart/form-data"
}

func (u uploads) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	start := graphql.Now()
	if r.ContentLength > u.maxBytes {
		writeError(w, http.StatusRequestEntityTooLarge, TooLarge(u.maxBytes))
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, u.maxBytes)
	sp := &spool{budget: u.disk}
	defer sp.release()
	params, status, err := u.read(r, sp)
	if err != nil {
		// The files go before the answer does, so a client that retries at once finds the
		// budget given back.
		sp.release()
		switch status {
		case http.StatusServiceUnavailable:
			w.Header().Set("Retry-After", overBudgetRetry)
			WriteError(w, status, apperr.OperationLimitExceeded, err.Error())
		default:
			writeError(w, status, err.Error())
		}
		return
	}
	params.Headers = r.Header
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}
	executeOnce(w, r, exec, params, 0)
}

// read parses the request into operation parameters with their files, spilled to sp. On
// failure it gives the status to answer with.
func (u uploads) read(r *http.Request, sp *spool) (*graphql.RawParams, int, error) {
	// A panic below (gqlgen's code is called) must not leave the files behind.
	defer func() {
		if p := recover(); p != nil {
			sp.release()
			panic(p)
		}
	}()
	fail := func(err error) (*graphql.RawParams, int, error) {
		if tooBig := new(http.MaxBytesError); errors.As(err, &tooBig) {
			return nil, http.StatusRequestEntityTooLarge, errors.New(TooLarge(u.maxBytes))
		}
		// A read deadline that passes mid-body is the server's bound on slow bodies, whose
		// error says which setting to change.
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return nil, http.StatusRequestTimeout, err
		}
		if errors.Is(err, diskbudget.ErrSpent) {
			return nil, http.StatusServiceUnavailable, fmt.Errorf(
				"the uploads and bulk loads in progress would exceed the disk budget for temporary files, %s (UPLOAD_DISK_BUDGET): retry later",
				bytesize.Format(u.disk.Limit()))
		}
		return nil, http.StatusBadRequest, err
	}

	mr, err := r.MultipartReader()
	if err != nil {
		return fail(fmt.Errorf("the multipart body could not be read: %w", err))
	}
	var params graphql.RawParams
	if err := decodePart(mr, "operations", &params); err != nil {
		return fail(err)
	}
	var fileMap map[string][]string
	if err := decodePart(mr, "map", &fileMap); err != nil {
		return fail(err)
	}
	if len(fileMap) > u.maxFiles {
		return nil, http.StatusRequestEntityTooLarge,
			fmt.Errorf("the request carries %d files; at most %d are accepted", len(fileMap), u.maxFiles)
	}
	for key, paths := range fileMap {
		if len(paths) > maxPathsPerFile {
			return fail(fmt.Errorf("the map gives file %q %d paths; one file may fill at most %d", key, len(paths), maxPathsPerFile))
		}
	}
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fail(fmt.Errorf("the multipart body could not be read: %w", err))
		}
		key := part.FormName()
		paths, ok := fileMap[key]
		if !ok {
			return fail(fmt.Errorf("part %q is not named in the map", key))
		}
		delete(fileMap, key)
		f, size, err := sp.spill(part)
		if f == nil {
			return nil, http.StatusInternalServerError, errors.New("the upload could not be stored")
		}
		if err != nil {
			return fail(fmt.Errorf("file %q could not be read: %w", key, err))
		}
		for _, path := range paths {
			// Each use reads the file from its start through a reader of its own, over the one
			// descriptor: a descriptor per use let one file take thousands.
			up := graphql.Upload{File: io.NewSectionReader(f, 0, size), Size: size, Filename: part.FileName(), ContentType: part.Header.Get("Content-Type")}
			if err := addUpload(&params, up, key, path); err != nil {
				return fail(err)
			}
		}
	}
	for key := range fileMap {
		return fail(fmt.Errorf("the map names file %q, but the request does not carry it", key))
	}
	return &params, 0, nil
}

// decodePart reads the next part, which must be the form field name, as JSON into v.
func decodePart(mr *multipart.Reader, name string, v any) error {
	part, err := mr.NextPart()
	if err != nil {
		return fmt.Errorf("the multipart body must go on with the %q part: %w", name, err)
	}
	if part.FormName() != name {
		return fmt.Errorf("the multipart body must have the %q part next, not %q, as the GraphQL multipart request specification orders them", name, part.FormName())
	}
	dec := json.NewDecoder(io.LimitReader(part, maxOperationsBytes))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("the %q part is not valid JSON: %w", name, err)
	}
	return nil
}

// addUpload puts a file where the map's path says, which must be a null in the variables:
// variables.file, variables.input.files.1. gqlgen's AddUpload assumes a well-formed path and
// panics on others (through a string, past a list's end, into absent variables), so the path is
// walked here first.
func addUpload(params *graphql.RawParams, up graphql.Upload, key, path string) error {
	bad := func(why string) error {
		return fmt.Errorf("the map's path %q for file %q %s", path, key, why)
	}
	parts := strings.Split(path, ".")
	if len(parts) < 2 || parts[0] != "variables" {
		return bad("must start with variables. and name a variable")
	}
	var cur any = params.Variables
	for i, p := range parts[1:] {
		last := i == len(parts)-2
		var next any
		switch v := cur.(type) {
		case map[string]any:
			val, ok := v[p]
			if !ok {
				return bad(fmt.Sprintf("names %q, which the variables do not have", p))
			}
			next = val
		case []any:
			n, err := strconv.Atoi(p)
			if err != nil || n < 0 || n >= len(v) {
				return bad(fmt.Sprintf("indexes %q, which the list of %d does not have", p, len(v)))
			}
			next = v[n]
		default:
			return bad("goes through a value that is neither an object nor a list")
		}
		if last && next != nil {
			return bad("must point to a null, which the file replaces")
		}
		cur = next
	}
	if gerr := params.AddUpload(up, key, path); gerr != nil {
		return errors.New(gerr.Message)
	}
	return nil
}
