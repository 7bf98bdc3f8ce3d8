// Package bulkcli is `go run . bulk`: bulk loads from a shell. It is a client of the gateway's
// own GraphQL API (validateBulkFiles, uploadBulkFiles, bulkUpload), so it checks and loads
// exactly as the gateway does, against whatever service the gateway fronts.
package bulkcli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"
)

// DefaultGateway is where the command finds the gateway unless -gateway says otherwise.
const DefaultGateway = "http://localhost:8080/graphql"

// ErrInvalid is the command's failure when rows are invalid: the report says which.
var ErrInvalid = errors.New("the files have invalid rows")

// TokenVariable is the environment variable holding the caller's bearer token for the gateway.
// It is not a flag: a flag's value is visible to every user of the machine in the process list.
const TokenVariable = "GATEWAY_TOKEN"

// Run runs `bulk validate|upload` with args; the report goes to stdout, progress to stderr.
// getenv supplies GATEWAY_TOKEN.
func Run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	// Help asked for goes to stdout, with every flag, whichever level asked.
	help := slices.ContainsFunc(args, func(a string) bool { return a == "-h" || a == "-help" || a == "--help" || a == "help" })
	out := stderr
	if help {
		out = stdout
	}
	cmd := "validate|upload"
	if len(args) > 0 && (args[0] == "validate" || args[0] == "upload") {
		cmd, args = args[0], args[1:]
	} else if !help {
		fmt.Fprintln(stderr, usage)
		return errors.New(`bulk: say "validate" or "upload" (-h lists the flags)`)
	}
	fs := flag.NewFlagSet("bulk "+cmd, flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Usage = func() { fmt.Fprintln(out, usage+"\n\nFlags:"); fs.PrintDefaults() }
	topAccounts := fs.String("top-accounts", "", "the Add/Update Top Accounts `file` (JSONL; with -model top_accounts)")
	clients := fs.String("clients", "", "the Clients `file` (JSONL)")
	people := fs.String("people", "", "the People/Trusts/Entities `file` (JSONL)")
	model := fs.String("model", "clients", "the People file's model: clients, or top_accounts (deprecated)")
	validOnly := fs.Bool("valid-rows-only", false, "upload: send the valid rows of files that have invalid ones")
	advisorID := fs.String("advisor", "", "the advisor `id` existing clients are looked up as (default: the caller's)")
	teamID := fs.String("team", "", "the team `id` existing clients are looked up as (default: the caller's)")
	gateway := fs.String("gateway", DefaultGateway, "the gateway's GraphQL `URL`")
	timeout := fs.Duration("timeout", 30*time.Minute, "how long to follow a load before giving up")
	if help {
		fs.Usage()
		return flag.ErrHelp
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *topAccounts == "" && *clients == "" && *people == "" {
		fs.Usage()
		return errors.New("bulk: give -clients, -people or both (or, with -model top_accounts, -top-accounts)")
	}
	gqlModel := map[string]string{"clients": "CLIENTS", "top_accounts": "TOP_ACCOUNTS"}[*model]
	if gqlModel == "" {
		return fmt.Errorf("bulk: -model %q: want clients or top_accounts", *model)
	}
	c := &client{url: *gateway, token: strings.TrimSpace(getenv(TokenVariable)), http: &http.Client{Timeout: 0}, progress: newBar(stderr)}
	files := map[string]string{"topAccounts": *topAccounts, "clients": *clients, "people": *people}
	vars := map[string]any{"model": gqlModel}
	for name, v := range map[string]string{"advisorId": *advisorID, "teamId": *teamID} {
		if v != "" {
			vars[name] = v
		}
	}
	if cmd == "validate" {
		return c.validate(ctx, files, vars, stdout)
	}
	vars["validRowsOnly"] = *validOnly
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	return c.upload(ctx, files, vars, stdout)
}

// fileFlags are the files' GraphQL variables, in the order they are sent, and their flags.
var fileFlags = []struct{ variable, flag string }{
	{"topAccounts", "top-accounts"}, {"clients", "clients"}, {"people", "people"},
}

const usage = `Usage: go run . bulk validate|upload [-top-accounts FILE] -clients FILE -people FILE [flags]

Checks bulk files (validate) or loads them (upload) through the gateway at -gateway
(default ` + DefaultGateway + `): the gateway checks every row and, for upload, sends the files
to the service and follows the load until the service has processed them. Exits 1, with
the invalid rows listed, when rows are invalid. A gateway that authenticates its callers
takes the bearer token in $GATEWAY_TOKEN.`

type client struct {
	url      string
	token    string // sent as a bearer token when set
	http     *http.Client
	progress *bar
}

type lineError struct {
	Line    int
	ID      *string
	Field   *string
	Message string
}

type fileReport struct {
	Rows, ValidRows, InvalidRows, ErrorCount int
	Errors                                   []lineError
	FileError                                *string
}

type report struct {
	Valid                        bool
	TopAccounts, Clients, People *fileReport
}

const reportFields = `valid
  topAccounts { rows validRows invalidRows errorCount fileError errors { line id field message } }
  clients { rows validRows invalidRows errorCount fileError errors { line id field message } }
  people { rows validRows invalidRows errorCount fileError errors { line id field message } }`

func (c *client) validate(ctx context.Context, files map[string]string, vars map[string]any, stdout io.Writer) error {
	var out struct{ ValidateBulkFiles report }
	query := `mutation($topAccounts: Upload, $clients: Upload, $people: Upload, $model: BulkModel, $advisorId: String, $teamId: String) {
  validateBulkFiles(topAccounts: $topAccounts, clients: $clients, people: $people, model: $model, advisorId: $advisorId, teamId: $teamId) { ` + reportFields + ` } }`
	if err := c.post(ctx, query, vars, files, &out); err != nil {
		return err
	}
	return printReport(stdout, &out.ValidateBulkFiles)
}

func (c *client) upload(ctx context.Context, files map[string]string, vars map[string]any, stdout io.Writer) error {
	var started struct{ UploadBulkFiles struct{ ID string } }
	query := `mutation($topAccounts: Upload, $clients: Upload, $people: Upload, $model: BulkModel, $validRowsOnly: Boolean, $advisorId: String, $teamId: String) {
  uploadBulkFiles(topAccounts: $topAccounts, clients: $clients, people: $people, model: $model, validRowsOnly: $validRowsOnly, advisorId: $advisorId, teamId: $teamId) { id } }`
	if err := c.post(ctx, query, vars, files, &started); err != nil {
		return err
	}
	id := started.UploadBulkFiles.ID
	fmt.Fprintf(stdout, "load %s started\n", id)
	var load struct {
		BulkUpload *struct {
			Phase      string
			Rows       int
			RowsTotal  *int
			Bytes      float64
			BytesTotal *float64
			Error      *string
			Validation *report
			Results    []struct {
				File, Kind                         string
				Rows, Applied, Invalid, ErrorCount int
				Errors                             []lineError
				FileError                          *string
			}
		}
	}
	follow := `query($id: ID!) { bulkUpload(id: $id) { phase rows rowsTotal bytes bytesTotal error
  validation { ` + reportFields + ` }
  results { file kind rows applied invalid errorCount fileError errors { line id field message } } } }`
	began, phase, sendTotal := time.Now(), "", 0.0
	for {
		if err := c.post(ctx, follow, map[string]any{"id": id}, nil, &load); err != nil {
			return err
		}
		l := load.BulkUpload
		if l == nil {
			return fmt.Errorf("bulk: the gateway no longer knows load %s", id)
		}
		if l.Phase != phase {
			// A step the load has left ended where it had to: everything was sent, even if no
			// poll happened to see the last byte go.
			if phase == "UPLOADING" && sendTotal > 0 {
				c.progress.show("sending", sendTotal, sendTotal, "bytes")
			}
			c.progress.done()
			phase = l.Phase
		}
		switch l.Phase {
		case "VALIDATING":
			c.progress.show("checking", float64(l.Rows), 0, "rows")
		case "UPLOADING":
			total := 0.0
			if l.BytesTotal != nil {
				total = *l.BytesTotal
			}
			sendTotal = total
			c.progress.show("sending", l.Bytes, total, "bytes")
		case "PROCESSING":
			c.progress.show("the service is processing the files", 0, 0, "")
		case "DONE", "FAILED":
			c.progress.done()
			if l.Validation != nil {
				_ = printReport(stdout, l.Validation)
			}
			invalid, rows, applied := 0, 0, 0
			for _, r := range l.Results {
				rows += r.Rows
				applied += r.Applied
				fmt.Fprintf(stdout, "%s: %d rows, %d applied, %d invalid\n", r.File, r.Rows, r.Applied, r.Invalid)
				if r.FileError != nil {
					fmt.Fprintf(stdout, "  %s\n", *r.FileError)
				}
				printErrors(stdout, r.Errors, r.ErrorCount)
				invalid += r.Invalid
			}
			if l.Phase == "FAILED" {
				return fmt.Errorf("bulk: load %s failed: %s", id, deref(l.Error))
			}
			if invalid > 0 {
				return fmt.Errorf("bulk: the service refused %d rows: %w", invalid, ErrInvalid)
			}
			fmt.Fprintf(stdout, "load %s done in %s: %d of %d rows applied, from %d files\n",
				id, time.Since(began).Round(100*time.Millisecond), applied, rows, len(l.Results))
			return nil
		}
		select {
		case <-time.After(500 * time.Millisecond):
		case <-ctx.Done():
			c.progress.done()
			return fmt.Errorf("bulk: stopped following load %s (it goes on; ask bulkUpload(id: %q)): %w", id, id, ctx.Err())
		}
	}
}

func printReport(w io.Writer, r *report) error {
	for _, f := range []struct {
		name string
		rep  *fileReport
	}{{"top accounts", r.TopAccounts}, {"clients", r.Clients}, {"people", r.People}} {
		if f.rep == nil {
			continue
		}
		fmt.Fprintf(w, "%s: %d rows, %d valid, %d invalid\n", f.name, f.rep.Rows, f.rep.ValidRows, f.rep.InvalidRows)
		if f.rep.FileError != nil {
			fmt.Fprintf(w, "  %s\n", *f.rep.FileError)
		}
		printErrors(w, f.rep.Errors, f.rep.ErrorCount)
	}
	if !r.Valid {
		return ErrInvalid
	}
	return nil
}

func printErrors(w io.Writer, errs []lineError, count int) {
	for _, e := range errs {
		at := fmt.Sprintf("line %d", e.Line)
		if e.ID != nil {
			at += fmt.Sprintf(" (id %s)", *e.ID)
		}
		if e.Field != nil {
			at += ", " + *e.Field
		}
		fmt.Fprintf(w, "  %s: %s\n", at, e.Message)
	}
	if count > len(errs) {
		fmt.Fprintf(w, "  ... and %d more\n", count-len(errs))
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// post sends an operation, as a multipart request when files are given (the GraphQL multipart
// request specification), and decodes its data into out; GraphQL errors become the error.
func (c *client) post(ctx context.Context, query string, vars map[string]any, files map[string]string, out any) error {
	var body io.Reader
	contentType := "application/json"
	var given []string
	for _, f := range fileFlags {
		if files[f.variable] != "" {
			given = append(given, f.variable)
			vars[f.variable] = nil
		}
	}
	ops, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	if err != nil {
		return err
	}
	if len(given) == 0 {
		body = bytes.NewReader(ops)
	} else {
		// Streamed: a file of millions of rows is never held in memory.
		pr, pw := io.Pipe()
		mw := multipart.NewWriter(pw)
		contentType = mw.FormDataContentType()
		go func() { pw.CloseWithError(c.writeParts(mw, ops, given, files)) }()
		body = pr
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, body)
	if err != nil {
		return fmt.Errorf("bulk: -gateway %q: %w", c.url, err)
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("GraphQL-Require-Preflight", "1")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("bulk: reach the gateway at %s: %w", c.url, err)
	}
	defer resp.Body.Close()
	var result struct {
		Data   json.RawMessage
		Errors []struct {
			Message    string
			Extensions map[string]any
		}
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<20)).Decode(&result); err != nil {
		return fmt.Errorf("bulk: the gateway answered %s, not GraphQL: %w", resp.Status, err)
	}
	if len(result.Errors) > 0 {
		var msgs []string
		for _, e := range result.Errors {
			msgs = append(msgs, fmt.Sprintf("%s (%v)", e.Message, e.Extensions["code"]))
		}
		return fmt.Errorf("bulk: %s", strings.Join(msgs, "; "))
	}
	return json.Unmarshal(result.Data, out)
}

// writeParts writes operations, the map and the files, showing how much of them is sent.
func (c *client) writeParts(mw *multipart.Writer, ops []byte, given []string, files map[string]string) error {
	if err := mw.WriteField("operations", string(ops)); err != nil {
		return err
	}
	m := map[string][]string{}
	var total int64
	for _, k := range given {
		m[k] = []string{"variables." + k}
		if info, err := os.Stat(files[k]); err == nil {
			total += info.Size()
		}
	}
	fileMap, _ := json.Marshal(m)
	if err := mw.WriteField("map", string(fileMap)); err != nil {
		return err
	}
	var sent int64
	for _, k := range given {
		f, err := os.Open(files[k])
		if err != nil {
			return fmt.Errorf("bulk: -%s: %w", flagOf(k), err)
		}
		part, err := mw.CreateFormFile(k, files[k])
		if err == nil {
			_, err = io.Copy(part, &counting{r: f, n: &sent, tick: func() {
				c.progress.show("sending "+k, float64(sent), float64(total), "bytes")
			}})
		}
		f.Close()
		if err != nil {
			return err
		}
	}
	c.progress.done()
	return mw.Close()
}

// counting counts what is read through it.
type counting struct {
	r    io.Reader
	n    *int64
	tick func()
}

func (c *counting) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	*c.n += int64(n)
	c.tick()
	return n, err
}

// flagOf is the flag of a file's GraphQL variable.
func flagOf(variable string) string {
	for _, f := range fileFlags {
		if f.variable == variable {
			return f.flag
		}
	}
	return variable
}
