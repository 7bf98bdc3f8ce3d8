package sftpd

import (
	"bytes"
	"crypto/subtle"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"golang.org/x/crypto/ssh"
)

// User is one SFTP login. With Config.Users, each user is jailed in its own root, the
// directory Dir/<Name>, and sees and writes nothing of another user's.
type User struct {
	// Name is the login and the name of the user's directory: 1 to 64 ASCII letters, digits,
	// '.', '_' or '-', starting with a letter or digit. Names that differ only in case are
	// refused together, as a case-insensitive file system would make them one directory.
	Name string
	// Password logs the user in. Empty turns password logins off for this user.
	Password string
	// AuthorizedKeysFile, when set, lists public keys (authorized_keys format) that log in as
	// this user without the password.
	AuthorizedKeysFile string
}

// maxUserName bounds a user's name, which is also a directory's name.
const maxUserName = 64

// account is a user as the server holds it.
type account struct {
	name     string
	password []byte
	keys     [][]byte
	// dir is the user's root on disk, absolute so that File.Path still names the file if the
	// process changes directory.
	dir string
	// state is shared by every Serve, so that a file is not complete while a writer on any
	// listener still has it open, and the quota counts every listener's writes.
	state *userState
}

// accounts checks cfg's users and makes their accounts: cfg.Users, each in Dir/<Name>, or the
// one user of the shorthand Config.User, whose root is Dir itself as it always was.
func accounts(cfg Config, dir string) ([]*account, error) {
	if len(cfg.Users) > 0 && (cfg.User != "" || cfg.Password != "" || cfg.AuthorizedKeysFile != "") {
		return nil, errors.New("sftp: set either Users or the one user's User, Password and AuthorizedKeysFile, not both")
	}
	if len(cfg.Users) == 0 {
		if cfg.User == "" {
			return nil, errors.New("sftp: a user is required")
		}
		a, err := newAccount(User{Name: cfg.User, Password: cfg.Password, AuthorizedKeysFile: cfg.AuthorizedKeysFile}, dir)
		if err != nil {
			return nil, err
		}
		return []*account{a}, nil
	}
	seen := map[string]string{}
	var out []*account
	for i, u := range cfg.Users {
		if err := checkUserName(u.Name); err != nil {
			return nil, fmt.Errorf("sftp: user %d: %w", i+1, err)
		}
		if other, ok := seen[strings.ToLower(u.Name)]; ok {
			return nil, fmt.Errorf("sftp: users %q and %q would share a directory: names must differ by more than case", other, u.Name)
		}
		seen[strings.ToLower(u.Name)] = u.Name
		a, err := newAccount(u, filepath.Join(dir, u.Name))
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

func newAccount(u User, dir string) (*account, error) {
	a := &account{name: u.Name, password: []byte(u.Password), dir: dir, state: newUserState()}
	if u.AuthorizedKeysFile != "" {
		var err error
		if a.keys, err = readAuthorizedKeys(u.AuthorizedKeysFile); err != nil {
			return nil, fmt.Errorf("user %q: %w", u.Name, err)
		}
	}
	if u.Password == "" && len(a.keys) == 0 {
		return nil, fmt.Errorf("sftp: user %q: a password or an authorized key is required", u.Name)
	}
	return a, nil
}

// checkUserName refuses a name that is not safe as a directory's name on any common file
// system: no separators, no "." or "..", nothing hidden, nothing a shell would need quoted.
func checkUserName(name string) error {
	if name == "" {
		return errors.New("a name is required")
	}
	if len(name) > maxUserName {
		return fmt.Errorf("name %.20q... is longer than %d bytes", name, maxUserName)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		alnum := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
		if i == 0 && !alnum {
			return fmt.Errorf("name %q must start with a letter or a digit", name)
		}
		if !alnum && c != '.' && c != '_' && c != '-' {
			return fmt.Errorf("name %q may hold only letters, digits, '.', '_' and '-'", name)
		}
	}
	return nil
}

// permUser is the key, in a login's ssh.Permissions, of the account it logged in as.
const permUser = "sftpd-user"

// checkPassword finds the account of a password login. Every account is compared, each in
// full, and one reply serves a wrong user and a wrong password: neither the answer nor its
// timing tells which was wrong or which users exist.
func (s *Server) checkPassword(md ssh.ConnMetadata, pw []byte) (*ssh.Permissions, error) {
	if err := s.throttle.check(md.RemoteAddr()); err != nil {
		return nil, err
	}
	var found *account
	for _, a := range s.accounts {
		userOK := subtle.ConstantTimeCompare([]byte(md.User()), []byte(a.name))
		passOK := subtle.ConstantTimeCompare(pw, a.password)
		if userOK&passOK == 1 && len(a.password) > 0 {
			found = a
		}
	}
	if found == nil {
		s.throttle.fail(md.RemoteAddr())
		return nil, errors.New("wrong user or password")
	}
	return &ssh.Permissions{Extensions: map[string]string{permUser: found.name}}, nil
}

// checkKey finds the account of a public key login.
func (s *Server) checkKey(md ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
	if err := s.throttle.check(md.RemoteAddr()); err != nil {
		return nil, err
	}
	wire := key.Marshal()
	for _, a := range s.accounts {
		if subtle.ConstantTimeCompare([]byte(md.User()), []byte(a.name)) != 1 {
			continue
		}
		for _, k := range a.keys {
			if bytes.Equal(k, wire) {
				return &ssh.Permissions{Extensions: map[string]string{permUser: a.name}}, nil
			}
		}
	}
	// Not counted as a failed login: keys cannot be guessed, and a client offers each key it
	// has, which would lock out an honest client with many.
	return nil, errors.New("unknown public key")
}
