package transport

import (
	"bytes"
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
	cfg  *Config
	disk *diskbudget.Budget // shared with the bulk loads' copies when the server wires one
	// maxPart bounds the operations and map parts, which are read into memory: what bounds a
	// JSON body, or maxOperationsBytes. They are checked against cfg.BodyBounds, as a JSON body
	// is, and a batch against the JSON transport's cfg.BatchLimit, so that a batch is refused
	// with the same message whichever way it comes.
	maxPart int64
}

// newUploads is the upload transport cfg describes.
func newUploads(cfg *Config) uploads {
	maxPart := int64(maxOperationsBytes)
	if cfg.MaxRequestBytes > 0 {
		maxPart = cfg.MaxRequestBytes
	}
	return uploads{cfg: cfg, disk: uploadBudget(cfg), maxPart: maxPart}
}

// maxOperationsBytes bounds the operations and map parts, which are read into memory, when no
// bound on a JSON body is set.
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
	if r.ContentLength > u.cfg.MaxUploadBytes {
		u.refuse(w, r, http.StatusRequestEntityTooLarge, errors.New(TooLarge(u.cfg.MaxUploadBytes)))
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, u.cfg.MaxUploadBytes)
	sp := &spool{budget: u.disk}
	defer sp.release()
	params, status, err := u.read(r, sp)
	if err != nil {
		// The files go before the answer does, so a client that retries at once finds the
		// budget given back.
		sp.release()
		u.refuse(w, r, status, err)
		return
	}
	params.Headers = r.Header
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}
	executeOnce(w, r, exec, params, 0, u.cfg)
}

// refuse answers a request refused before it became an operation, having counted it against
// its caller's rate limit as the JSON transport counts its refusals: a caller past its budget
// is told that instead (429), and a bomb in a multipart body costs its sender as one in a JSON
// body does.
func (u uploads) refuse(w http.ResponseWriter, r *http.Request, status int, err error) {
	if pastBudget(w, r, u.cfg.CountRefused) {
		return
	}
	switch status {
	case http.StatusServiceUnavailable:
		w.Header().Set("Retry-After", overBudgetRetry)
		WriteError(w, status, apperr.OperationLimitExceeded, err.Error())
	default:
		writeError(w, status, err.Error())
	}
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
			return nil, http.StatusRequestEntityTooLarge, errors.New(TooLarge(u.cfg.MaxUploadBytes))
		}
		if part := new(partTooLargeError); errors.As(err, &part) {
			return nil, http.StatusRequestEntityTooLarge, err
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
	ops, err := readPart(mr, "operations", u.maxPart)
	if err != nil {
		return fail(err)
	}
	params, err := u.operation(ops)
	if err != nil {
		return fail(err)
	}
	mapped, err := readPart(mr, "map", u.maxPart)
	if err != nil {
		return fail(err)
	}
	fileMap, status, err := u.fileMap(mapped)
	if err != nil {
		return nil, status, err
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
			if err := addUpload(params, up, key, path); err != nil {
				return fail(err)
			}
		}
	}
	for key := range fileMap {
		return fail(fmt.Errorf("the map names file %q, but the request does not carry it", key))
	}
	return params, 0, nil
}

// partTooLargeError is an operations or map part past the bound on what is read into memory.
type partTooLargeError struct {
	name  string
	limit int64
}

func (e *partTooLargeError) Error() string {
	return fmt.Sprintf("the %q part is larger than the limit of %s", e.name, bytesize.Format(e.limit))
}

// readPart reads the next part, which must be the form field name, whole, refusing it as soon
// as it passes limit: it is read into memory, to be scanned before anything decodes it.
func readPart(mr *multipart.Reader, name string, limit int64) ([]byte, error) {
	part, err := mr.NextPart()
	if err != nil {
		return nil, fmt.Errorf("the multipart body must go on with the %q part: %w", name, err)
	}
	if part.FormName() != name {
		return nil, fmt.Errorf("the multipart body must have the %q part next, not %q, as the GraphQL multipart request specification orders them", name, part.FormName())
	}
	// A part has no length of its own, and the request's is mostly files: what is read grows
	// as the part arrives, and ReadAll's growth costs about twice the part, where a buffer's
	// doublings cost four times it.
	data, err := io.ReadAll(io.LimitReader(part, limit+1))
	if err != nil {
		return nil, fmt.Errorf("the %q part could not be read: %w", name, err)
	}
	if int64(len(data)) > limit {
		return nil, &partTooLargeError{name, limit}
	}
	return data, nil
}

// Refusals of the operations part, in the JSON transport's words where they are the same.
var (
	errBadOperations   = errors.New(`the "operations" part must be a JSON object whose query, operationName and documentId are strings and whose variables and extensions are objects`)
	errEmptyOperations = errors.New(`the "operations" part is empty: send a JSON object with a query`)
	errMultipartBatch  = errors.New(`the "operations" part holds a batch, which a multipart request does not carry: send one operation per multipart request`)
)

// operation reads the operations part's parameters, once its bytes show it holds no more than
// a JSON body may: the same scan, the same bounds and the same refusals, so that a bomb is
// refused unread whichever way it comes.
func (u uploads) operation(data []byte) (*graphql.RawParams, error) {
	data = bytes.TrimSpace(data)
	switch {
	case len(data) == 0:
		return nil, errEmptyOperations
	case data[0] == '[':
		// The specification allows a batch here; this transport serves one operation. A
		// batch is refused as the JSON transport refuses it first, so that its bounds hold.
		if u.cfg.BatchLimit <= 0 {
			return nil, errBatchesOff
		}
		switch err := scanBatch(data, u.cfg.BodyBounds, u.cfg.BatchLimit); {
		case errors.Is(err, errNotJSON):
			return nil, errBadOperations
		case err != nil:
			return nil, err
		}
		return nil, errMultipartBatch
	}
	if err := scanOperation(data, u.cfg.BodyBounds); errors.Is(err, errNotJSON) {
		return nil, errBadOperations
	} else if err != nil {
		return nil, err
	}
	var raw rawParams
	if err := decodeParams(data, &raw); err != nil {
		return nil, errBadOperations
	}
	return raw.params()
}

// errBadMap is a map part that is not the specification's: an object of lists of paths.
var errBadMap = errors.New(`the "map" part must be a JSON object whose members are lists of paths, such as {"0": ["variables.file"]}`)

// fileMap reads the map part, once a scan of its bytes has counted the files it names, the
// paths of each and the segments of each path against their bounds: a map of a million files,
// of a million paths for one, or of one path of a million segments is refused unread. On
// failure it gives the status to answer with.
func (u uploads) fileMap(data []byte) (map[string][]string, int, error) {
	// A path names a variable, then one member or index per level the variables nest.
	depth := u.cfg.BodyBounds.Depth
	b := mapBounds{paths: maxPathsPerFile, segments: depth + 1, depth: depth}
	s := &bodyScan{data: data}
	s.space()
	if s.peek() != '{' {
		return nil, http.StatusBadRequest, errBadMap
	}
	files, err := s.fileMap(b)
	if err != nil {
		return nil, http.StatusBadRequest, err
	}
	if files > u.cfg.MaxUploadFiles {
		return nil, http.StatusRequestEntityTooLarge,
			fmt.Errorf("the request carries %d files; at most %d are accepted", files, u.cfg.MaxUploadFiles)
	}
	var fileMap map[string][]string
	if err := decodeJSON(bytes.NewReader(data), &fileMap); err != nil {
		return nil, http.StatusBadRequest, errBadMap
	}
	// Again, decoded: an escaped dot is a dot too.
	for key, paths := range fileMap {
		for _, path := range paths {
			if n := strings.Count(path, ".") + 1; n > b.segments {
				return nil, http.StatusBadRequest, b.tooManySegments(key, n)
			}
		}
	}
	return fileMap, 0, nil
}

// mapBounds bound a map part: paths per file, and segments per path, which is depth+1.
type mapBounds struct{ paths, segments, depth int }

func (b mapBounds) tooManySegments(key string, n int) error {
	return fmt.Errorf("the map's path for file %q has %d segments; the variables nest at most %d levels, so a path has at most %d",
		key, n, b.depth, b.segments)
}

// fileMap scans a map part, an object of lists of strings, and counts its members; a member
// past b is refused, naming it.
func (s *bodyScan) fileMap(b mapBounds) (int, error) {
	s.pos++ // {
	s.space()
	if s.peek() == '}' {
		s.pos++
		if s.whole(nil) != nil {
			return 0, errBadMap
		}
		return 0, nil
	}
	for files := 1; ; files++ {
		start := s.pos
		if s.peek() != '"' || s.string() != nil {
			return 0, errBadMap
		}
		key := s.data[start:s.pos]
		if s.space(); s.peek() != ':' {
			return 0, errBadMap
		}
		s.pos++
		s.space()
		paths, segments, err := s.paths()
		if err != nil {
			return 0, err
		}
		switch {
		case paths > b.paths:
			return 0, fmt.Errorf("the map gives file %q %d paths; one file may fill at most %d", mapKey(key), paths, b.paths)
		case segments > b.segments:
			return 0, b.tooManySegments(mapKey(key), segments)
		}
		s.space()
		switch s.peek() {
		case ',':
			s.pos++
			s.space()
		case '}':
			s.pos++
			if s.whole(nil) != nil {
				return 0, errBadMap
			}
			return files, nil
		default:
			return 0, errBadMap
		}
	}
}

// mapKey is a scanned key, decoded to name it in a refusal; a bad escape names it "".
func mapKey(raw []byte) string {
	var key string
	_ = json.Unmarshal(raw, &key)
	return key
}

// paths scans a list of strings, and counts them and the segments of the longest.
func (s *bodyScan) paths() (paths, segments int, err error) {
	if s.peek() != '[' {
		return 0, 0, errBadMap
	}
	s.pos++
	s.space()
	if s.peek() == ']' {
		s.pos++
		return 0, 0, nil
	}
	for {
		start := s.pos
		if s.peek() != '"' || s.string() != nil {
			return 0, 0, errBadMap
		}
		paths++
		segments = max(segments, bytes.Count(s.data[start:s.pos], []byte{'.'})+1)
		s.space()
		switch s.peek() {
		case ',':
			s.pos++
			s.space()
		case ']':
			s.pos++
			return paths, segments, nil
		default:
			return 0, 0, errBadMap
		}
	}
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
